import Foundation
import TestSupport
import Testing

/// `Deploy/lib/supervise.sh`, which `Deploy/dev.sh` runs every process under: a process that
/// fails is started again after a backoff that doubles, each restart is logged, a clean exit ends
/// the supervision, and SIGTERM stops the process and the supervision.
@Suite(.timeLimit(.minutes(2))) struct SupervisorTests {
    /// A supervised shell script, in a folder of its own: it writes its pid, then runs `then`.
    struct Supervised {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("supervise-\(UUID().uuidString)")
        var pidFile: URL { folder.appendingPathComponent("pid") }
        var log: URL { folder.appendingPathComponent("child.log") }
        var errors: URL { folder.appendingPathComponent("supervisor.err") }
        let supervisor = Process()

        init(then command: String) throws {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let child = folder.appendingPathComponent("child.sh")
            try "#!/bin/sh\necho $$ > '\(pidFile.path).new' && mv '\(pidFile.path).new' '\(pidFile.path)'\n\(command)\n"
                .write(to: child, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: child.path)
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            // Started as a shell would start it: the test process blocks most signals and a child
            // inherits that mask, so Python clears it before running bash.
            supervisor.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            supervisor.arguments = [
                "python3", "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execvp(sys.argv[1], sys.argv[1:])",
                "/bin/bash", "-c", #"set -euo pipefail; source "$0"; supervise demo "$1" "$2""#,
                PeerProcess.repository.appendingPathComponent("Deploy/lib/supervise.sh").path, log.path, child.path,
            ]
            supervisor.environment = ["PATH": "/usr/bin:/bin", "SUPERVISE_STABLE_SECONDS": "600"]
            supervisor.standardError = try FileHandle(forWritingTo: errors)
            try supervisor.run()
        }

        /// The pid in the pid file once it names a process other than `other` (the suite's time
        /// limit bounds the wait).
        func pid(other: pid_t?) async throws -> pid_t {
            while true {
                if let pid = try? writtenPID(), pid != other { return pid }
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        func writtenPID() throws -> pid_t? {
            pid_t(try String(contentsOf: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        }

        /// The supervisor's exit status, once it has exited (within a minute).
        func exit() async throws -> Int32 {
            try await supervisor.status(within: .seconds(60))
        }

        var said: String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

        func remove() { try? FileManager.default.removeItem(at: folder) }
    }

    @Test func aKilledProcessIsRestartedWithBackoffAndSIGTERMStopsBoth() async throws {
        let supervised = try Supervised(then: "exec sleep 3600")
        defer { supervised.remove() }
        let first = try await supervised.pid(other: nil)
        kill(first, SIGKILL)
        let second = try await supervised.pid(other: first)
        kill(second, SIGKILL)
        let third = try await supervised.pid(other: second)
        #expect(supervised.said.contains("==> demo exited with status 137; restarting in 1s"), "\(supervised.said)")
        #expect(supervised.said.contains("==> demo exited with status 137; restarting in 2s"), "\(supervised.said)")
        #expect(try String(contentsOf: supervised.log, encoding: .utf8).contains("restarting in 2s"))

        supervised.supervisor.terminate()
        #expect(try await supervised.exit() == 0)
        #expect(kill(third, 0) != 0, "the supervised process stops with its supervisor")
        #expect(try supervised.writtenPID() == third, "nothing was started after SIGTERM")
    }

    @Test func aCleanExitIsNotRestarted() async throws {
        let supervised = try Supervised(then: "exit 0")
        defer { supervised.remove() }
        #expect(try await supervised.exit() == 0)
        #expect(supervised.said == "==> demo stopped\n")
    }
}
