package cli

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestManPage: the manual page holds every command with the flags its -h
// prints, escapes what roff would take for requests, and formats without
// a warning from man(1) when it is installed.
func TestManPage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Run(t.Context(), Env{Stdout: &out, Stderr: &errOut, Build: BuildInfo{Version: "1.2.3"}}, []string{"help", "--man"}); code != 0 {
		t.Fatalf("help --man: exit %d, %s", code, errOut.String())
	}
	page := out.String()
	if !strings.HasPrefix(page, `.TH EARSHOT 1 "" "earshot 1.2.3"`) {
		t.Errorf("the page starts %q", page[:min(60, len(page))])
	}
	for name := range commands {
		if !strings.Contains(page, "\n.SS "+roffText(name)+"\n") {
			t.Errorf("no section for %s", name)
		}
	}
	// Flags of a few commands, as their -h prints them.
	for _, flag := range []string{`\-\-list\-models`, `\-\-format`, `\-\-max\-connections`, `\-\-since`} {
		if !strings.Contains(page, flag) {
			t.Errorf("the page lacks %s", flag)
		}
	}
	for i, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "'") {
			t.Errorf("line %d would be read as a request: %q", i+1, line)
		}
		if strings.HasPrefix(line, ".") && !isManRequest(line) {
			t.Errorf("line %d would be read as a request: %q", i+1, line)
		}
	}
	if roffLine(".hidden") != `\&.hidden` || roffText(`a\b-c`) != `a\eb\-c` {
		t.Errorf("escaping: %q %q", roffLine(".hidden"), roffText(`a\b-c`))
	}
	man, err := exec.LookPath("man")
	if err != nil {
		return // the structure above is still checked
	}
	cmd := exec.CommandContext(t.Context(), man, "--warnings", "-E", "UTF-8", "-l", "-")
	cmd.Stdin = strings.NewReader(page)
	cmd.Env = append(cmd.Environ(), "MANWIDTH=80", "MAN_KEEP_FORMATTING=0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = new(bytes.Buffer), &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("man: %v %s", err, stderr.String())
	}
}

// isManRequest reports whether line is one of the requests manPage writes.
func isManRequest(line string) bool {
	for _, r := range []string{".TH ", ".SH ", ".SS ", ".B ", ".I ", ".RI ", ".PP", ".nf", ".fi", ".br", ".TP"} {
		if strings.HasPrefix(line, r) || line == strings.TrimSpace(r) {
			return true
		}
	}
	return false
}
