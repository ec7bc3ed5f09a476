//go:build race

package parser

// raceEnabled: the race detector slows code by up to 10x.
const raceEnabled = true
