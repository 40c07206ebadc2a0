//go:build race

package hub

// raceOn says the tests run under the race detector.
const raceOn = true
