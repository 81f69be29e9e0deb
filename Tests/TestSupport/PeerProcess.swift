import Foundation
import ServiceRuntime

/// A test peer written in Python (an SMTP sink, push-provider stand-ins) run for the length of
/// one test: started with its arguments and a private folder, waited for until it writes `ready`
/// there, and stopped by closing its standard input (then terminated) when the body ends.
public enum PeerProcess {
    /// A peer that failed to start.
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `python3 <repository>/<script> arguments…` while `body` runs; `folder` must exist.
    /// `hint` says what to install when the peer exits at once.
    public static func run<Result: Sendable>(
        script: String, arguments: [String], folder: URL, hint: String, _ body: () async throws -> Result
    ) async throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", repository.appendingPathComponent(script).path] + arguments
        let input = Pipe()
        process.standardInput = input
        let log = folder.appendingPathComponent("peer.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
        try await waitForReady(folder, process: process, script: script, hint: hint, log: log)
        return try await body()
    }

    /// The repository's root.
    public static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private static func waitForReady(_ folder: URL, process: Process, script: String, hint: String, log: URL) async throws {
        for _ in 0..<1_200 {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready").path) { return }
            guard process.isRunning else {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw Failure(description: "\(script) exited (\(hint)): \(output.suffix(2_000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "\(script) did not start within a minute")
    }

    /// Writes the test CA and a leaf it issued for `localhost` and 127.0.0.1 into `folder`:
    /// the arguments `--cert <path> --key <path>` and the CA's path.
    public static func writeTLSFiles(into folder: URL, commonName: String) throws -> (arguments: [String], caFile: String) {
        let leaf = TestPKI.material(commonName: commonName).leaf
        let files = [
            ("ca.pem", try TestPKI.authority.certificatePEM), ("cert.pem", try leaf.certificatePEM), ("key.pem", leaf.privateKeyPEM),
        ]
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        return (["--cert", path("cert.pem"), "--key", path("key.pem")], path("ca.pem"))
    }
}
