// Package api is Earshot's client of the speech and text intelligence
// service: hosts and regions, authentication, typed errors, the options of
// every endpoint with the specification's rules as validation, the typed
// messages of every WebSocket family, and the REST and WebSocket clients.
//
// The same types are used by the local engine (package engine) to serve the
// interface, so a rule is written once and both sides agree on it.
//
// The package knows nothing of audio devices, sessions or the UI.
package api
