package api

import (
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// FuzzParseCloseReason holds what a stream's caller sees of a close
// frame, which any peer writes: only the three normal ends are no error;
// any other close is an *Error with that close code, whose code is a
// well-formed code and whose message is the reason's own text; and the
// *Error read from a reason reads the same again once written back the
// way the local engine writes it ("CODE: message").
func FuzzParseCloseReason(f *testing.F) {
	seeds := []struct {
		code   websocket.StatusCode
		reason string
	}{
		{websocket.StatusPolicyViolation, "DATA-0000"},
		{websocket.StatusPolicyViolation, "DATA-0000: payload could not be decoded as audio"},
		{websocket.StatusInternalError, "NET-0001 Deepgram did not receive audio data or a text message within the timeout window."},
		{websocket.StatusNormalClosure, "NET-0001"},
		{websocket.StatusInternalError, "internal trouble"},
		{websocket.StatusNormalClosure, ""},
		{websocket.StatusNormalClosure, "bye"},
		{websocket.StatusGoingAway, "restart"},
		{websocket.StatusGoingAway, "NET-0001"},
		{websocket.StatusNoStatusRcvd, ""},
		{websocket.StatusMessageTooBig, "BIG-0000 é"},
		{websocket.StatusPolicyViolation, "DATA-00001"},
		{websocket.StatusPolicyViolation, "DATA-0000_x"},
		{websocket.StatusPolicyViolation, "data-0000"},
		{websocket.StatusPolicyViolation, "DATA-0000\u00a0: x"},
		{websocket.StatusPolicyViolation, "DATA-0000:::   "},
		{websocket.StatusInternalError, "NET-0001\t\n: \u3000 spaced \u3000"},
		{websocket.StatusInternalError, ": leading colon "},
		{websocket.StatusInternalError, "\xff\xfe"},
		{websocket.StatusInternalError, "NET-0001\xff"},
		{websocket.StatusPolicyViolation, "A-1234é"},
		{0, ""},
		{-1, "X-0000"},
		{4000, strings.Repeat("Z", 123)},
	}
	for _, s := range seeds {
		f.Add(int(s.code), s.reason)
	}
	f.Fuzz(func(t *testing.T, code int, reason string) {
		e := parseCloseReason(websocket.StatusCode(code), reason)
		if e == nil {
			switch websocket.StatusCode(code) {
			case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
				return
			}
			t.Fatalf("close %d %q is no error", code, reason)
		}
		if e.CloseCode != code || e.Status != 0 || e.Error() == "" {
			t.Fatalf("close %d %q gave %#v", code, reason, *e)
		}
		if e.Code != "" && closeReasonCode.FindString(e.Code) != e.Code {
			t.Fatalf("close %d %q gave the code %q", code, reason, e.Code)
		}
		if !strings.Contains(reason, e.Message) {
			t.Fatalf("close %d %q gave the message %q", code, reason, e.Message)
		}
		written := e.Message
		if e.Code != "" {
			written = e.Code
			if e.Message != "" {
				written += ": " + e.Message
			}
		}
		again := parseCloseReason(websocket.StatusCode(code), written)
		if again == nil || *again != *e {
			t.Fatalf("close %d %q gave %#v; written back as %q it gives %#v", code, reason, *e, written, again)
		}
	})
}
