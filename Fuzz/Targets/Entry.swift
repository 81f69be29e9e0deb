import Foundation

/// One fuzz target: a function libFuzzer calls with each input it tries. A target traps
/// (`preconditionFailure`) on a broken invariant; anything the code under test refuses by
/// throwing is a normal outcome.
typealias FuzzTarget = @Sendable (_ input: [UInt8]) -> Void

/// The targets `BAAS_FUZZ_TARGET` may name.
let fuzzTargets: [String: FuzzTarget] = [
    "where": WhereTarget.run,
    "json": JSONTarget.run,
    "multipart": MultipartTarget.run,
    "engineio": EngineIOTarget.run,
]

/// The target this process fuzzes, chosen once from the environment.
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["BAAS_FUZZ_TARGET"] ?? ""
    guard let target = fuzzTargets[name] else {
        let known = fuzzTargets.keys.sorted().joined(separator: ", ")
        FileHandle.standardError.write(Data("BAAS_FUZZ_TARGET must name one of: \(known) (got '\(name)')\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's callback: runs the selected target on one input.
@_cdecl("LLVMFuzzerTestOneInput")
package func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = start.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    selectedTarget(input)
    return 0
}

/// libFuzzer's driver: reads its flags from the command line and calls `test` with each input.
@_extern(c, "LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt
