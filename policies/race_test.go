//go:build race

package policies_test

// raceDetector is on: the differential test compares a sample of its corpus
// under make unit; make pod-security runs the whole corpus without it.
const raceDetector = true
