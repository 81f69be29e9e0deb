import Foundation

// SwiftPM names every executable's entry point after its target and points `main` at it, so
// libFuzzer's own `main` never runs: this one starts its driver instead.

// The target is chosen before fuzzing starts: exiting later would read to libFuzzer as a crash.
_ = selectedTarget
var arguments = CommandLine.argc
var argumentValues = CommandLine.unsafeArgv
// A closure, not `fuzzOneInput` itself: naming a `@_cdecl` function here would emit its C symbol twice.
exit(runFuzzerDriver(&arguments, &argumentValues) { start, count in fuzzOneInput(start, count) })
