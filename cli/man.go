package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
)

// manPage writes the manual page earshot(1) in roff: the overview of
// `earshot help` and, for each command, what `earshot COMMAND -h` prints.
// The Debian package installs it (scripts/package), so that the manual
// and the help never disagree.
func manPage(ctx context.Context, env Env, w io.Writer) error {
	var b strings.Builder
	v := env.Build.Version
	if v == "" {
		v = "unknown"
	}
	fmt.Fprintf(&b, ".TH EARSHOT 1 \"\" \"earshot %s\" \"User Commands\"\n", roffText(v))
	b.WriteString(".SH NAME\nearshot \\- captions, transcripts, voices, a voice agent and text analysis\n")
	b.WriteString(".SH SYNOPSIS\n.B earshot\n.br\n.B earshot\n.I command\n.RI [ flags ]\n")
	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString("Without a command, \\fBearshot\\fR opens the desktop app: live captions of the microphone and of the computer's sound, " +
		"transcription of audio files, a turn-aware conversation view, a voice playground, a voice agent, text analysis of documents, " +
		"and the history of all of it.\n.PP\n")
	b.WriteString("It works with the hosted speech service when an API key is set (in the app's Settings, kept in the system keyring, " +
		"or in \\fBDEEPGRAM_API_KEY\\fR), and with its own local engine, offline, when none is.\n")
	b.WriteString(".SH COMMANDS\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		// A command's -h prints its usage and flags and runs nothing.
		var help bytes.Buffer
		sub := env
		sub.Stdout, sub.Stderr = &help, &help
		_ = commands[n].run(ctx, sub, []string{"-h"})
		fmt.Fprintf(&b, ".SS %s\n%s.\n.PP\n.nf\n", roffText(n), roffText(commands[n].summary))
		for line := range strings.Lines(strings.TrimRight(help.String(), "\n")) {
			b.WriteString(roffLine(strings.TrimRight(line, "\n")))
			b.WriteByte('\n')
		}
		b.WriteString(".fi\n")
	}
	b.WriteString(".SH ENVIRONMENT\n")
	b.WriteString(".TP\n.B DEEPGRAM_API_KEY\nA key for the hosted service, used when none is kept in the keyring.\n")
	b.WriteString(".TP\n.B EARSHOT_ENGINE_KEY\nThe key clients of \\fBearshot serve\\fR must send, when \\fB\\-\\-key\\fR is not given.\n")
	b.WriteString(".SH EXIT STATUS\n0 on success, 2 for a mistake in the command line, 1 for any other failure.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// roffText escapes s for running text: backslashes and hyphens (a
// hyphen in an option must print as a minus sign to be copied).
func roffText(s string) string {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`).Replace(s)
}

// roffLine escapes a line of preformatted text: as roffText, and a line
// that starts with a control character is kept as text.
func roffLine(s string) string {
	s = roffText(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
