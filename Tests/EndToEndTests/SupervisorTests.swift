import Foundation
import Testing
import TestSupport

/// `Deploy/lib/supervise.sh`, which `Deploy/dev.sh` runs every process under: a process that
/// exits is started again after a backoff that doubles, each restart is logged, and SIGTERM stops
/// the process and the supervision.
@Suite(.timeLimit(.minutes(2))) struct SupervisorTests {
    @Test func aKilledProcessIsRestartedWithBackoffAndSIGTERMStopsBoth() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("supervise-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pidFile = folder.appendingPathComponent("pid")
        let child = folder.appendingPathComponent("child.sh")
        try "#!/bin/sh\necho $$ > '\(pidFile.path).new' && mv '\(pidFile.path).new' '\(pidFile.path)'\nexec sleep 3600\n"
            .write(to: child, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: child.path)
        let log = folder.appendingPathComponent("child.log")
        let errors = folder.appendingPathComponent("supervisor.err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)

        let supervisor = Process()
        // Started from a shell, as dev.sh is: the test process blocks most signals, and a child
        // inherits that mask, so Python clears it before running bash.
        supervisor.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        supervisor.arguments = [
            "python3", "-c", "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])",
            "/bin/bash", "-c", #"set -euo pipefail; source "$0"; supervise demo "$1" "$2""#,
            PeerProcess.repository.appendingPathComponent("Deploy/lib/supervise.sh").path, log.path, child.path,
        ]
        supervisor.environment = ["PATH": "/usr/bin:/bin", "SUPERVISE_STABLE_SECONDS": "600"]
        supervisor.standardError = try FileHandle(forWritingTo: errors)
        try supervisor.run()

        let first = try await Self.pid(in: pidFile, other: nil)
        kill(first, SIGKILL)
        let second = try await Self.pid(in: pidFile, other: first)
        kill(second, SIGKILL)
        let third = try await Self.pid(in: pidFile, other: second)
        let said = try String(contentsOf: errors, encoding: .utf8)
        #expect(said.contains("==> demo exited with status 137; restarting in 1s"), "\(said)")
        #expect(said.contains("==> demo exited with status 137; restarting in 2s"), "\(said)")
        #expect(try String(contentsOf: log, encoding: .utf8).contains("restarting in 2s"))

        supervisor.terminate()
        while supervisor.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(supervisor.terminationStatus == 0)
        #expect(kill(third, 0) != 0, "the supervised process stops with its supervisor")
        #expect(try Self.read(pidFile) == third, "nothing was started after SIGTERM")
    }

    /// The pid in `file` once it names a process other than `other` (the suite's time limit
    /// bounds the wait).
    private static func pid(in file: URL, other: pid_t?) async throws -> pid_t {
        while true {
            if let pid = try? read(file), pid != other { return pid }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private static func read(_ file: URL) throws -> pid_t? {
        pid_t(try String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
