package agentspec

// Full and ConfigOf, for the tests that read config.json with its
// readers (package agentspec_test, since cmd/internal/serve imports this
// package).
var (
	Full     = full
	ConfigOf = configOf
)
