package audio

// G.711 companding, table-driven. The tables are built once at start-up by
// the algorithms of the ITU-T G.191 reference software (its g711 module), so
// every code and every decision level is exactly ITU's:
//
//   - A-law looks at the 12 most significant bits of the 16-bit input (its
//     smallest step is two 13-bit units), mu-law at the 14 most significant
//     bits, with a bias of 33;
//   - negative inputs use the one's complement (^x), which makes both
//     quantisers exactly symmetric: encode(^x) == encode(x) ^ 0x80;
//   - decoding yields the midpoint of each quantisation interval, scaled to
//     16 bits (mu-law +-32124 and A-law +-32256 at full scale).
//
// Encoding by lookup costs one shift and one load; the tables take 22 KiB.

var (
	mulawLinear [256]int16
	alawLinear  [256]int16
	mulawFloat  [256]float32
	alawFloat   [256]float32
	mulawCode   [1 << 14]byte // indexed by uint16(x) >> 2
	alawCode    [1 << 12]byte // indexed by uint16(x) >> 4
)

func init() {
	for i := range 256 {
		mulawLinear[i] = mulawExpand(byte(i))
		alawLinear[i] = alawExpand(byte(i))
		mulawFloat[i] = float32(mulawLinear[i]) / 32768
		alawFloat[i] = float32(alawLinear[i]) / 32768
	}
	// The encoders only look at the top 14 (mu-law) or 12 (A-law) bits, so
	// one representative input per table slot covers all 65536 inputs.
	for i := range len(mulawCode) {
		mulawCode[i] = mulawCompress(int16(uint16(i) << 2))
	}
	for i := range len(alawCode) {
		alawCode[i] = alawCompress(int16(uint16(i) << 4))
	}
}

// MulawEncode returns the G.711 mu-law code for a 16-bit linear sample.
func MulawEncode(x int16) byte { return mulawCode[uint16(x)>>2] }

// MulawDecode returns the 16-bit linear value of a G.711 mu-law code.
func MulawDecode(c byte) int16 { return mulawLinear[c] }

// AlawEncode returns the G.711 A-law code for a 16-bit linear sample.
func AlawEncode(x int16) byte { return alawCode[uint16(x)>>4] }

// AlawDecode returns the 16-bit linear value of a G.711 A-law code.
func AlawDecode(c byte) int16 { return alawLinear[c] }

// mulawCompress is the reference mu-law encoder, used only to fill tables.
func mulawCompress(x int16) byte {
	var mag int
	if x < 0 {
		mag = int(^x>>2) + 33
	} else {
		mag = int(x>>2) + 33
	}
	if mag > 0x1FFF {
		mag = 0x1FFF
	}
	seg := 1
	for i := mag >> 6; i != 0; i >>= 1 {
		seg++
	}
	hi := 8 - seg
	lo := 0xF - (mag>>seg)&0xF
	c := byte(hi<<4 | lo)
	if x >= 0 {
		c |= 0x80
	}
	return c
}

// mulawExpand is the reference mu-law decoder, used only to fill tables.
func mulawExpand(c byte) int16 {
	m := ^c
	exp := int(m>>4) & 7
	mant := int(m & 0xF)
	step := 4 << (exp + 1)
	v := 0x80<<exp + step*mant + step/2 - 4*33
	if c < 0x80 {
		v = -v
	}
	return int16(v)
}

// alawCompress is the reference A-law encoder, used only to fill tables.
func alawCompress(x int16) byte {
	var ix int
	if x < 0 {
		ix = int(^x >> 4)
	} else {
		ix = int(x >> 4)
	}
	if ix > 15 {
		exp := 1
		for ix > 16+15 {
			ix >>= 1
			exp++
		}
		ix = ix - 16 + exp<<4
	}
	if x >= 0 {
		ix |= 0x80
	}
	return byte(ix) ^ 0x55
}

// alawExpand is the reference A-law decoder, used only to fill tables.
func alawExpand(c byte) int16 {
	ix := int(c^0x55) & 0x7F
	exp := ix >> 4
	mant := ix & 0xF
	if exp > 0 {
		mant += 16
	}
	mant = mant<<4 + 8
	if exp > 1 {
		mant <<= exp - 1
	}
	if c < 0x80 {
		mant = -mant
	}
	return int16(mant)
}
