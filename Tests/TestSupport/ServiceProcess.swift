import Foundation
import InternalProtocol
import PostgresSupport
import ServiceRuntime

/// One service executable run as its own process, as `Deploy/dev.sh` and Compose run it, so a
/// test can kill it the way an operator's `kill -9` or a crashed host would. The executables
/// come from `BAAS_TEST_BIN_DIR`, which `Deploy/test.sh` builds and sets.
package final class ServiceProcess: @unchecked Sendable {
    private let process: Process
    /// Its operations port (`/ready`, `/metrics`).
    package let opsPort: Int

    private init(process: Process, opsPort: Int) {
        self.process = process
        self.opsPort = opsPort
    }

    /// Starts `service serve` over `database` with `environment` added, its internal
    /// certificates from `pkiDirectory`, its output in `log`; returns once `/ready` answers 200
    /// (within a minute).
    package static func start(
        _ service: ServiceName, database: DatabaseConfiguration, pkiDirectory: String, log: URL,
        environment extra: [String: String] = [:]
    ) async throws -> ServiceProcess {
        guard let bin = ProcessInfo.processInfo.environment["BAAS_TEST_BIN_DIR"] else {
            throw PeerProcess.Failure(
                description:
                    "BAAS_TEST_BIN_DIR is unset: run the suite with Deploy/test.sh, which builds \(service.executable)")
        }
        let opsPort = try await FreePort.next()
        var environment = [
            "BAAS_POSTGRES_HOST": database.host, "BAAS_POSTGRES_PORT": "\(database.port)",
            "BAAS_POSTGRES_USER": database.username,
            "BAAS_POSTGRES_DATABASE": database.database, "BAAS_POSTGRES_MAX_CONNECTIONS": "4",
            "BAAS_PKI_DIR": pkiDirectory,
            "BAAS_OPS_PORT": "\(opsPort)", "BAAS_RPC_PORT": "\(try await FreePort.next())", "BAAS_LOG_LEVEL": "warning",
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
        ]
        environment["BAAS_POSTGRES_PASSWORD"] = database.password
        environment.merge(extra) { $1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: bin).appendingPathComponent(service.executable)
        process.arguments = ["serve"]
        process.environment = environment
        if !FileManager.default.fileExists(atPath: log.path) {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        }
        let output = try FileHandle(forWritingTo: log)
        try output.seekToEnd()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let started = ServiceProcess(process: process, opsPort: opsPort)
        do {
            try await started.waitUntilReady(log: log)
        } catch {
            await started.kill()
            throw error
        }
        return started
    }

    private func waitUntilReady(log: URL) async throws {
        // A try lasts as long as its answer takes: the deadline bounds a service that accepts
        // connections but never answers.
        let deadline = ContinuousClock.now + .seconds(120)
        for _ in 0..<600 where ContinuousClock.now < deadline {
            guard !process.hasExited else {
                let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw PeerProcess.Failure(description: "the service exited: \(text.suffix(2_000))")
            }
            if (try? await HTTPTestClient.send(.GET, "http://127.0.0.1:\(opsPort)/ready").status) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw PeerProcess.Failure(description: "the service was not ready in time (600 tries, two minutes at most)")
    }

    /// Ends the process at once (SIGKILL): nothing of it runs to completion, no transaction commits.
    package func kill() async {
        await process.end(signal: SIGKILL)
    }

    /// Stops the process as `docker stop` would (SIGTERM, then SIGKILL after 30 seconds) and
    /// waits for it to exit; bounded, and cancelled or not.
    package func stop() async {
        await process.end(signal: SIGTERM, grace: .seconds(30))
    }
}
