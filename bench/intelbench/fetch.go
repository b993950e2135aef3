package intelbench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrChecksum means a fetched package is not the pinned one.
var ErrChecksum = errors.New("checksum mismatch")

// maxEntry bounds one file read from a package, so a hostile archive cannot
// exhaust memory.
const maxEntry = 64 << 20

// NPMPackage pins one version of an npm package by its registry integrity
// string ("sha512-" and the base64 digest of the tarball).
type NPMPackage struct {
	Name, Version, Integrity string
}

// DebPackage pins one version of a Debian package. apt-get checks the
// download against Debian's signed index; SHA256 (by GOARCH) pins the exact
// bytes on the architectures it lists.
type DebPackage struct {
	Name, Version string
	SHA256        map[string]string
}

// SentimentNPM is the npm package "sentiment" (MIT), whose validation
// fixtures are the UCI Sentiment Labelled Sentences of Kotzias et al. (KDD
// 2015, CC BY 4.0): 1000 sentences each from Amazon, IMDb and Yelp reviews,
// labelled positive or negative by people.
var SentimentNPM = NPMPackage{
	Name:      "sentiment",
	Version:   "5.0.2",
	Integrity: "sha512-ZeC3y0JsOYTdwujt5uOd7ILJNilbgFzUtg/LEG4wUv43LayFNLZ28ec8+Su+h3saHlJmIwYxBzfDHHZuiMA15g==",
}

// SentimentFiles are the fixture files of SentimentNPM, by source name.
var SentimentFiles = map[string]string{
	"Amazon": "package/test/fixtures/amazon.json",
	"IMDb":   "package/test/fixtures/imdb.json",
	"Yelp":   "package/test/fixtures/yelp.json",
}

// TmDeb is Debian 12's r-cran-tm, which ships Reuters-21578 stories (the
// "acq" and "crude" samples and ten stories of the collection's first file)
// as XML, each with the headline its Reuters journalist wrote.
var TmDeb = DebPackage{
	Name:    "r-cran-tm",
	Version: "0.7-11-1",
	SHA256:  map[string]string{"amd64": "483fa4e8c8fec74a36875470932b71c21ed2209bbab504f50844aca2d24cb51b"},
}

// IsReutersFile reports whether a path inside TmDeb holds Reuters stories.
func IsReutersFile(name string) bool {
	const dir = "./usr/lib/R/site-library/tm/texts/"
	if !strings.HasPrefix(name, dir) || !strings.HasSuffix(name, ".xml") {
		return false
	}
	rest := strings.TrimPrefix(name, dir)
	return rest == "reuters-21578.xml" || strings.HasPrefix(rest, "acq/") || strings.HasPrefix(rest, "crude/")
}

// npmRegistry is where npm packages' tarballs are downloaded from.
const npmRegistry = "https://registry.npmjs.org"

// FetchNPM returns the path of the pinned package's tarball in
// cacheDir/npm, downloading it from the npm registry when it is not there
// yet. The registry's integrity digest pins the bytes, so no npm client is
// needed.
func FetchNPM(ctx context.Context, cacheDir string, p NPMPackage) (string, error) {
	dir := filepath.Join(cacheDir, "npm")
	path := filepath.Join(dir, p.Name+"-"+p.Version+".tgz")
	if err := checkIntegrity(path, p.Integrity); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("npm %s: %w", p.Name, err)
	}
	tmp, err := os.CreateTemp(dir, "download-")
	if err != nil {
		return "", fmt.Errorf("npm %s: %w", p.Name, err)
	}
	defer os.Remove(tmp.Name())
	err = download(ctx, tmp, npmRegistry+"/"+p.Name+"/-/"+p.Name+"-"+p.Version+".tgz")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("npm %s@%s: %w", p.Name, p.Version, err)
	}
	if err := checkIntegrity(tmp.Name(), p.Integrity); err != nil {
		return "", fmt.Errorf("npm %s@%s: %w", p.Name, p.Version, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("npm %s: %w", p.Name, err)
	}
	return path, nil
}

// download copies the body of a GET of url to w.
func download(ctx context.Context, w io.Writer, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	_, err = io.Copy(w, io.LimitReader(resp.Body, maxEntry))
	return err
}

func checkIntegrity(path, integrity string) error {
	want, ok := strings.CutPrefix(integrity, "sha512-")
	if !ok {
		return fmt.Errorf("integrity %q: only sha512 is supported", integrity)
	}
	sum, err := fileSum(path, sha512.New())
	if err != nil {
		return err
	}
	if base64.StdEncoding.EncodeToString(sum) != want {
		return fmt.Errorf("%s: %w", path, ErrChecksum)
	}
	return nil
}

// FetchDeb returns the path of the pinned .deb in cacheDir/deb, running
// `apt-get download` to fetch it when it is not there yet (that needs the
// package lists of `apt-get update`, not root).
func FetchDeb(ctx context.Context, cacheDir string, p DebPackage) (string, error) {
	dir := filepath.Join(cacheDir, "deb")
	path := filepath.Join(dir, p.Name+"_"+p.Version+"_"+runtime.GOARCH+".deb")
	if _, err := os.Stat(path); err == nil && checkDeb(path, p) == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("deb %s: %w", p.Name, err)
	}
	tmp, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return "", fmt.Errorf("deb %s: %w", p.Name, err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "apt-get", "download", "-q", p.Name+"="+p.Version)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get download %s=%s: %w: %s", p.Name, p.Version, err, bytes.TrimSpace(out))
	}
	got, err := filepath.Glob(filepath.Join(tmp, p.Name+"_*.deb"))
	if err != nil || len(got) != 1 {
		return "", fmt.Errorf("apt-get download %s=%s: no single .deb in %s", p.Name, p.Version, tmp)
	}
	if err := checkDeb(got[0], p); err != nil {
		return "", fmt.Errorf("deb %s=%s: %w", p.Name, p.Version, err)
	}
	if err := os.Rename(got[0], path); err != nil {
		return "", fmt.Errorf("deb %s: %w", p.Name, err)
	}
	return path, nil
}

func checkDeb(path string, p DebPackage) error {
	want, ok := p.SHA256[runtime.GOARCH]
	if !ok {
		return nil
	}
	sum, err := fileSum(path, sha256.New())
	if err != nil {
		return err
	}
	if hex.EncodeToString(sum) != want {
		return fmt.Errorf("%s: %w", path, ErrChecksum)
	}
	return nil
}

func fileSum(path string, h interface {
	io.Writer
	Sum([]byte) []byte
}) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h.Sum(nil), nil
}

// ReadTarGz reads the regular files whose names want accepts from a
// gzip-compressed tar stream (an npm tarball).
func ReadTarGz(r io.Reader, want func(name string) bool) (map[string][]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("tar.gz: %w", err)
	}
	defer zr.Close()
	return ReadTar(zr, want)
}

// ReadTar reads the regular files whose names want accepts from a tar
// stream. A file larger than 64 MiB is an error.
func ReadTar(r io.Reader, want func(name string) bool) (map[string][]byte, error) {
	tr := tar.NewReader(r)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tar: %w", err)
		}
		if h.Typeflag != tar.TypeReg || !want(h.Name) {
			continue
		}
		if h.Size > maxEntry {
			return nil, fmt.Errorf("tar: %s: %d bytes, over the %d limit", h.Name, h.Size, maxEntry)
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxEntry))
		if err != nil {
			return nil, fmt.Errorf("tar: %s: %w", h.Name, err)
		}
		out[h.Name] = b
	}
}

// ReadNPM reads the named files from the pinned npm package, fetching it
// into cacheDir first if needed.
func ReadNPM(ctx context.Context, cacheDir string, p NPMPackage, names []string) (map[string][]byte, error) {
	path, err := FetchNPM(ctx, cacheDir, p)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("npm %s: %w", p.Name, err)
	}
	defer f.Close()
	files, err := ReadTarGz(f, func(n string) bool { return contains(names, n) })
	if err != nil {
		return nil, fmt.Errorf("npm %s: %w", p.Name, err)
	}
	for _, n := range names {
		if _, ok := files[n]; !ok {
			return nil, fmt.Errorf("npm %s@%s: no %s", p.Name, p.Version, n)
		}
	}
	return files, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// ReadDeb reads the files whose names want accepts from the pinned Debian
// package's data, fetching it into cacheDir first if needed. dpkg-deb
// unpacks the archive (its data is xz-compressed, which Go's standard
// library does not read).
func ReadDeb(ctx context.Context, cacheDir string, p DebPackage, want func(string) bool) (map[string][]byte, error) {
	path, err := FetchDeb(ctx, cacheDir, p)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", path)
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("deb %s: %w", p.Name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("deb %s: %w", p.Name, err)
	}
	files, rerr := ReadTar(stdout, want)
	if rerr != nil {
		_, _ = io.Copy(io.Discard, stdout) // let dpkg-deb finish writing
	}
	werr := cmd.Wait()
	if rerr != nil {
		return nil, fmt.Errorf("deb %s: %w", p.Name, rerr)
	}
	if werr != nil {
		return nil, fmt.Errorf("dpkg-deb %s: %w: %s", p.Name, werr, bytes.TrimSpace(stderr.Bytes()))
	}
	return files, nil
}
