import Foundation
import ServiceRuntime

/// A real SMTP server for one test: `Deploy/smtp-sink.py` (aiosmtpd) on a free loopback port,
/// writing each accepted message as JSON into a private folder; optionally with STARTTLS
/// (a certificate from the test CA) and AUTH.
package struct SMTPSink: Sendable {
    /// The port it listens on.
    package let port: Int
    /// Where messages and TLS files are.
    package let folder: URL
    /// The test CA's certificate, for the client to trust, when TLS is on.
    package var caFile: String { folder.appendingPathComponent("ca.pem").path }

    /// Starts a sink, runs `body`, stops the sink.
    package static func with<Result: Sendable>(
        tls: Bool = false, credentials: (user: String, password: String)? = nil,
        _ body: @Sendable (SMTPSink) async throws -> Result
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let sink = SMTPSink(port: try await FreePort.next(), folder: folder)
        var arguments = ["--port", "\(sink.port)", "--out", folder.path]
        if tls { arguments += try PeerProcess.writeTLSFiles(into: folder, commonName: "smtp-sink").arguments }
        if let credentials { arguments += ["--user", credentials.user, "--password", credentials.password] }
        return try await PeerProcess.run(
            script: "Deploy/smtp-sink.py", arguments: arguments, folder: folder, hint: "is aiosmtpd installed?"
        ) {
            try await body(sink)
        }
    }

    /// The messages received so far, oldest first.
    package func messages() throws -> [[String: Any]] {
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".json") }
            .sorted()
        return try names.map { name in
            let data = try Data(contentsOf: folder.appendingPathComponent(name))
            return try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        }
    }
}
