package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/earshot-app/earshot/internal/count"
	"github.com/earshot-app/earshot/internal/timecode"
	"github.com/earshot-app/earshot/sessions"
	"github.com/earshot-app/earshot/store"
)

const notesSummary = "meeting notes of a live captions session: summary, topics, action items"

// notesListed bounds the meetings --list prints, newest first.
const notesListed = 20

func notes(ctx context.Context, env Env, args []string) error {
	var (
		redo, list bool
		output     string
	)
	fs := flag.NewFlagSet("notes", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.BoolVar(&redo, "redo", false, "write the notes again, even if the meeting has some")
	fs.StringVar(&output, "o", "", "write the notes to `FILE` instead of standard output")
	fs.BoolVar(&list, "list", false, "list the latest meetings and their session IDs")
	fs.Usage = func() {
		fmt.Fprint(env.Stderr, `Usage: earshot notes SESSION_ID [--redo] [-o notes.md]
       earshot notes --list

Prints the notes of a meeting (a live captions session in the app's
history) as Markdown: the summary, the topics and the action items, each
with who said it and when, then the transcript. Notes written before
are read back from history; the first time, or with --redo, they are
written from the saved transcript by the service chosen in the app's
Settings, and saved with the meeting.

Flags:
`)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return errUsage
	}
	usageErr := usageError(env, "notes")
	var id int64
	switch {
	case list && (len(pos) > 0 || redo || output != ""):
		return usageErr("--list takes no session ID, --redo or -o")
	case list:
	case len(pos) == 0:
		return usageErr("which meeting? give its session ID (earshot notes --list shows them)")
	case len(pos) > 1:
		return usageErr("one meeting at a time (got %d: %s)", len(pos), strings.Join(pos, ", "))
	default:
		id, err = strconv.ParseInt(pos[0], 10, 64)
		if err != nil || id <= 0 {
			return usageErr("%q is not a session ID: give the number earshot notes --list shows", pos[0])
		}
	}
	ws, err := env.historyWorkspace(ctx, "write meeting notes")
	if err != nil {
		return err
	}
	defer ws.Close()
	if list {
		return listMeetings(ctx, env, ws)
	}

	status := newStatusLine(env, env.Stderr)
	defer status.clear()
	written := false
	n, unsaved := ws.MeetingNotes(ctx, id, redo, func(p sessions.NotesProgress) {
		written = true
		if p.Parts > 1 {
			status.set(fmt.Sprintf("Writing the notes (part %d of %d)…", p.Part, p.Parts))
		} else {
			status.set("Writing the notes…")
		}
	})
	var sf *sessions.SaveFailedEvent
	if unsaved != nil && !errors.As(unsaved, &sf) {
		return notesError(id, unsaved)
	}
	m, err := ws.Meeting(ctx, id)
	if err != nil {
		return notesError(id, err)
	}
	var buf bytes.Buffer
	if err := sessions.WriteNotesMarkdown(&buf, n, m); err != nil {
		return fmt.Errorf("write the notes: %w", err)
	}
	status.clear()
	if err := writeOutput(env, output, buf.Bytes()); err != nil {
		return err
	}
	what := count.Of(len(n.Topics), "topic") + ", " + count.Of(len(n.ActionItems), "action item")
	switch {
	case !written:
		fmt.Fprintf(env.Stderr, "The notes of “%s” (%s), written by %s on %s, from history; --redo writes them again.\n",
			n.Title, what, n.Backend, n.Written.Local().Format("2 January 2006 15:04"))
	case unsaved != nil:
		fmt.Fprintf(env.Stderr, "Wrote the notes of “%s” (%s) with %s.\n", n.Title, what, n.Backend)
	default:
		fmt.Fprintf(env.Stderr, "Wrote the notes of “%s” (%s) with %s; saved to history.\n", n.Title, what, n.Backend)
	}
	return unsaved
}

// notesError says in plain words why meeting id has no notes.
func notesError(id int64, err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return reword(err, "there is no session %d in the history (earshot notes --list shows the meetings)", id)
	case errors.Is(err, sessions.ErrEnglishOnly):
		return reword(err, "text analysis reads English only; set the language in the app's Settings to en")
	}
	return err
}

// listMeetings prints the latest meetings: their session IDs, when they
// were, how long, and their titles.
func listMeetings(ctx context.Context, env Env, ws *Workspace) error {
	list, err := ws.Sessions(ctx, store.Filter{Kinds: []string{store.KindCaptions, store.KindConversation}, Limit: notesListed})
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(env.Stderr, "No meetings in the history yet: live captions are kept there.")
		return nil
	}
	for _, s := range list {
		fmt.Fprintf(env.Stdout, "%6d  %s  %8s  %s\n", s.ID, s.Started.Local().Format("2006-01-02 15:04"), timecode.Of(s.Duration), s.Title)
	}
	return nil
}
