import Foundation
import ServiceRuntime

/// A real SMTP server for one test: `Deploy/smtp-sink.py` (aiosmtpd) on a free loopback port,
/// writing each accepted message as JSON into a private folder; optionally with STARTTLS
/// (a certificate from the test CA) and AUTH.
public struct SMTPSink: Sendable {
    /// The port it listens on.
    public let port: Int
    /// Where messages and TLS files are.
    public let folder: URL
    /// The test CA's certificate, for the client to trust, when TLS is on.
    public var caFile: String { folder.appendingPathComponent("ca.pem").path }

    /// Starts a sink, runs `body`, stops the sink.
    public static func with<Result: Sendable>(
        tls: Bool = false, credentials: (user: String, password: String)? = nil,
        _ body: @Sendable (SMTPSink) async throws -> Result
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sink = SMTPSink(port: try await FreePort.next(), folder: folder)
        var arguments = [Self.script, "--port", "\(sink.port)", "--out", folder.path]
        if tls { arguments += try sink.writeTLSFiles() }
        if let credentials { arguments += ["--user", credentials.user, "--password", credentials.password] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let input = Pipe()
        process.standardInput = input
        let log = folder.appendingPathComponent("sink.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
        try await sink.waitForFile("ready", process: process)
        return try await body(sink)
    }

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Deploy/smtp-sink.py").path
    }

    private func writeTLSFiles() throws -> [String] {
        let leaf = TestPKI.material(commonName: "smtp-sink").leaf
        let files = [
            ("ca.pem", try TestPKI.authority.certificatePEM), ("cert.pem", try leaf.certificatePEM),
            ("key.pem", leaf.privateKeyPEM),
        ]
        for (name, text) in files { try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8) }
        return ["--cert", folder.appendingPathComponent("cert.pem").path, "--key", folder.appendingPathComponent("key.pem").path]
    }

    private func waitForFile(_ name: String, process: Process) async throws {
        for _ in 0..<1_200 {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) { return }
            guard process.isRunning else { throw SinkError(message: "smtp-sink.py exited (is aiosmtpd installed?)") }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw SinkError(message: "smtp-sink.py did not start")
    }

    /// The messages received so far, oldest first.
    public func messages() throws -> [[String: Any]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }.sorted()
        return try names.map { name in
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
    }

    /// A sink that failed to start.
    public struct SinkError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
