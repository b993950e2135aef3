package engine

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/earshot-app/earshot/api"
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError answers in the service's legacy error shape,
// {err_code, err_msg, request_id}.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	writeJSON(w, status, api.LegacyErrorBody{ErrCode: code, ErrMsg: msg, RequestID: requestID(r.Context())})
}

// writeOptionError answers a refused option with the status, code and
// message the service uses for the same mistake.
func writeOptionError(w http.ResponseWriter, r *http.Request, err error) {
	var oe *api.OptionError
	if errors.As(err, &oe) {
		status, code := oe.Status, oe.Code
		if status == 0 {
			status = http.StatusBadRequest
		}
		if code == "" {
			code = api.CodeBadRequest
		}
		writeError(w, r, status, code, oe.Reason)
		return
	}
	writeError(w, r, http.StatusBadRequest, api.CodeBadRequest, err.Error())
}

// notOffered answers a parameter or feature of the interface that the
// local engine does not implement, saying so plainly.
func notOffered(what string) *api.OptionError {
	return &api.OptionError{Param: what, Reason: "The local engine does not offer " + what + " yet.",
		Status: http.StatusBadRequest, Code: api.CodeBadRequest}
}
