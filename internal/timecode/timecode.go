// Package timecode writes a time within a recording, a meeting or a
// stream (seconds from its start) the one way Earshot shows it to
// people, in the app, the command line and the Markdown exports alike:
// 0:07, 12:34, 1:02:03, and with a fraction where one is wanted, 1:02.35.
//
// A time is cut, never rounded, to what is shown: a word said at 59.6
// seconds was said in the 0:59 second, and a reader who seeks to the time
// shown hears it. Formats that a file format fixes (SRT's 00:01:02,500,
// WebVTT's 00:01:02.500) are not written here but by the exporters.
package timecode

import (
	"math"
	"strconv"
	"time"
)

// maxSeconds bounds what is written: a hundred thousand hours, far past
// any recording, so that conversions to integers never overflow.
const maxSeconds = 100_000 * 3600

// Of writes seconds as m:ss, or h:mm:ss from the first hour on. A
// negative time or NaN is 0:00.
func Of(seconds float64) string { return Fine(seconds, 0) }

// Duration writes d as Of writes its seconds.
func Duration(d time.Duration) string { return Of(d.Seconds()) }

// Fine writes seconds as Of does, with digits (0 to 3) of a second after a
// point: Fine(62.35, 2) is 1:02.35. A value within a thousandth below a
// shown step counts as that step, so that 2.3 seconds reads 0:02.30 and
// not 0:02.29 for the way a float holds it.
func Fine(seconds float64, digits int) string {
	digits = min(max(digits, 0), 3)
	if math.IsNaN(seconds) || seconds < 0 {
		seconds = 0
	}
	seconds = min(seconds, maxSeconds)
	ms := int64(seconds*1000 + 1e-6) // whole thousandths, float noise forgiven
	unit := int64(math.Pow10(3 - digits))
	ms -= ms % unit
	s := ms / 1000
	h, m, sec := s/3600, s/60%60, s%60
	b := make([]byte, 0, 16)
	if h > 0 {
		b = strconv.AppendInt(b, h, 10)
		b = append(b, ':')
		b = twoDigits(b, m)
	} else {
		b = strconv.AppendInt(b, m, 10)
	}
	b = append(b, ':')
	b = twoDigits(b, sec)
	if digits > 0 {
		frac := strconv.FormatInt(1000+ms%1000, 10) // "1350": a leading 1 keeps the zeros
		b = append(b, '.')
		b = append(b, frac[1:1+digits]...)
	}
	return string(b)
}

func twoDigits(b []byte, n int64) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}
