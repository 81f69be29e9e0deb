import Foundation

/// A command-line tool run to its end (a validator, a fuzzer), its output kept in a file so a
/// long report cannot fill a pipe and stall it.
package struct ToolRun: Sendable {
    /// Its exit status.
    package let status: Int32
    /// What it wrote on standard output and standard error.
    package let output: String

    /// Runs `arguments` (the first names the tool, found on `PATH`) in `directory` (the
    /// repository unless told) and waits for it to exit. Past `timeLimit`, or when the task is
    /// cancelled, the tool is ended and the run throws.
    package static func run(
        _ arguments: [String], environment extra: [String: String] = [:], directory: URL = PeerProcess.repository,
        timeLimit: Duration = .seconds(900)
    ) async throws -> ToolRun {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let handle = try FileHandle(forWritingTo: log)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        process.environment = ProcessInfo.processInfo.environment.merging(extra) { $1 }
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let status: Int32
        do {
            status = try await process.status(within: timeLimit)
        } catch {
            await process.end()
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw Unfinished(arguments: arguments, error: error, outputTail: String(output.suffix(8_000)))
        }
        return ToolRun(status: status, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "")
    }

    /// A run ended before the tool finished: what it was, why, and the end of what it wrote
    /// (where it was when it stopped).
    package struct Unfinished: Error, CustomStringConvertible {
        let arguments: [String]
        let error: any Error
        let outputTail: String

        package var description: String {
            "\(arguments.prefix(3).joined(separator: " ")) did not finish (\(error)); it last wrote:\n\(outputTail)"
        }
    }
}
