package intelbench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func makeTarGz(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "package/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadTarGz(t *testing.T) {
	tgz := makeTarGz(t, map[string]string{"package/a.json": "[1]", "package/b.txt": "skip"})
	got, err := ReadTarGz(bytes.NewReader(tgz), func(n string) bool { return n != "package/b.txt" })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || string(got["package/a.json"]) != "[1]" {
		t.Errorf("got %q, want only package/a.json", got)
	}
	if _, err := ReadTarGz(bytes.NewReader(tgz[:len(tgz)/2]), func(string) bool { return true }); err == nil {
		t.Error("truncated archive read without error")
	}
	if _, err := ReadTarGz(bytes.NewReader([]byte("not gzip")), func(string) bool { return true }); err == nil {
		t.Error("non-gzip input read without error")
	}
}

func FuzzReadTarGz(f *testing.F) {
	f.Add(makeTarGz(f, map[string]string{"package/test/fixtures/amazon.json": `[{"text":"ok","class":1}]`}))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, in []byte) {
		files, err := ReadTarGz(bytes.NewReader(in), func(string) bool { return true })
		if err != nil {
			return
		}
		for name, b := range files {
			if len(b) > maxEntry {
				t.Fatalf("%s: %d bytes over the limit", name, len(b))
			}
		}
	})
}

// A package already in the cache with the pinned digest is used as it is,
// without asking the registry; one with another digest is refused.
func TestFetchNPMCached(t *testing.T) {
	dir := t.TempDir()
	body := makeTarGz(t, map[string]string{"package/x.json": "[]"})
	sum := sha512.Sum512(body)
	p := NPMPackage{Name: "demo", Version: "1.0.0", Integrity: "sha512-" + base64.StdEncoding.EncodeToString(sum[:])}
	if err := os.MkdirAll(filepath.Join(dir, "npm"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "npm", "demo-1.0.0.tgz")
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadNPM(context.Background(), dir, p, []string{"package/x.json"})
	if err != nil {
		t.Fatal(err)
	}
	if string(got["package/x.json"]) != "[]" {
		t.Errorf("got %q", got)
	}
	if _, err := ReadNPM(context.Background(), dir, p, []string{"package/missing.json"}); err == nil {
		t.Error("missing file not reported")
	}
	if err := os.WriteFile(path, append(body, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkIntegrity(path, p.Integrity); !errors.Is(err, ErrChecksum) {
		t.Errorf("changed tarball: err = %v, want ErrChecksum", err)
	}
	if err := checkIntegrity(path, "sha1-abc"); err == nil || errors.Is(err, ErrChecksum) {
		t.Errorf("sha1 integrity: err = %v, want unsupported", err)
	}
}

func TestIsReutersFile(t *testing.T) {
	tests := map[string]bool{
		"./usr/lib/R/site-library/tm/texts/acq/reut-00001.xml":   true,
		"./usr/lib/R/site-library/tm/texts/crude/reut-00002.xml": true,
		"./usr/lib/R/site-library/tm/texts/reuters-21578.xml":    true,
		"./usr/lib/R/site-library/tm/texts/rcv1_2330.xml":        false,
		"./usr/lib/R/site-library/tm/texts/custom.xml":           false,
		"./usr/lib/R/site-library/tm/texts/acq/":                 false,
		"./usr/share/doc/r-cran-tm/copyright":                    false,
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IsReutersFile(name); got != want {
				t.Errorf("IsReutersFile = %v, want %v", got, want)
			}
		})
	}
}
