// Package sessions holds one type per use case of the app: the lifecycles,
// buffering, reconnection and persistence between the UI and the lower
// layers (api, audio, store). Nothing here imports the UI toolkit; the UI
// drives these types and listens to their events.
//
// Each session type follows the same contract: Start(ctx) error, an
// idempotent Stop() error, and an event channel closed on stop. Sessions
// depend on small interfaces declared where they are used.
package sessions
