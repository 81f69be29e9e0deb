import Foundation
import Glibc
import ServiceRuntime

/// A test peer written in Python (an SMTP sink, push-provider stand-ins) run for the length of
/// one test: started with its arguments and a private folder, waited for until it writes `ready`
/// there, and stopped by closing its standard input (then terminated) when the body ends.
package enum PeerProcess {
    /// A peer that failed to start.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// Runs `python3 <repository>/<script> arguments…` while `body` runs; `folder` must exist.
    /// `hint` says what to install when the peer exits at once.
    package static func run<Result: Sendable>(
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
        do {
            try await waitForReady(folder, process: process, script: script, hint: hint, log: log)
            let result = try await body()
            await stop(process, input: input)
            return result
        } catch {
            await stop(process, input: input)
            throw error
        }
    }

    /// Closes the peer's input (it exits on its own), then ends it (bounded, cancelled or not).
    private static func stop(_ process: Process, input: Pipe) async {
        try? input.fileHandleForWriting.close()
        await process.end()
    }

    /// The repository's root.
    package static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    private static func waitForReady(_ folder: URL, process: Process, script: String, hint: String, log: URL)
        async throws
    {
        for _ in 0..<1_200 {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready").path) { return }
            guard !process.hasExited else {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw Failure(description: "\(script) exited (\(hint)): \(output.suffix(2_000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "\(script) did not start within a minute")
    }

    /// Writes the test CA and a leaf it issued for `localhost` and 127.0.0.1 into `folder`:
    /// the arguments `--cert <path> --key <path>` and the CA's path.
    package static func writeTLSFiles(into folder: URL, commonName: String) throws -> (
        arguments: [String], caFile: String
    ) {
        let leaf = TestPKI.material(commonName: commonName).leaf
        let files = [
            ("ca.pem", try TestPKI.authority.certificatePEM), ("cert.pem", try leaf.certificatePEM),
            ("key.pem", leaf.privateKeyPEM),
        ]
        for (name, text) in files {
            try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let path = { (name: String) in folder.appendingPathComponent(name).path }
        return (["--cert", path("cert.pem"), "--key", path("key.pem")], path("ca.pem"))
    }
}

/// Bounded, cancellation-aware waits on a child process. Foundation hears of a child's exit only
/// once every copy of a socket the child inherited is closed, which a grandchild, or a sibling
/// spawned at the same moment, can delay for good (`isRunning` then stays true and
/// `waitUntilExit` never returns, holding a thread of the shared pool meanwhile); these ask the
/// kernel instead, without reaping the child, which Foundation still does.
extension Process {
    /// Whether the child (started with `run()`) has ended.
    package var hasExited: Bool {
        guard isRunning else { return true }
        return kernelExit().ended
    }

    /// The ended child's status as `terminationStatus` gives it (its exit code, or the signal
    /// that ended it); nil while it runs.
    package var endedStatus: Int32? {
        guard isRunning else { return terminationStatus }
        return kernelExit().status
    }

    /// The child's exit as the kernel has it, read with `WNOWAIT` so the child stays for
    /// Foundation to reap.
    private func kernelExit() -> (ended: Bool, status: Int32?) {
        var info = siginfo_t()
        guard waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
            // ECHILD: Foundation has just reaped it, and records its status in a moment.
            return (errno == ECHILD, nil)
        }
        guard info._sifields._sigchld.si_pid != 0 else { return (false, nil) }
        return (true, info._sifields._sigchld.si_status)
    }

    /// Waits, polling without holding a thread, until the child has ended or `limit` has passed:
    /// whether it ended. Cancellation ends the wait at once.
    package func waitForExit(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while !hasExited {
            guard ContinuousClock.now < deadline, !Task.isCancelled else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    /// Waits, polling without holding a thread, for the child's status (see ``endedStatus``).
    /// Throws `CancellationError` when cancelled and ``PeerProcess/Failure`` after `limit`; the
    /// child is left running either way (``end(signal:grace:)`` ends it).
    package func status(within limit: Duration) async throws -> Int32 {
        let deadline = ContinuousClock.now + limit
        while true {
            if let status = endedStatus { return status }
            guard ContinuousClock.now < deadline else {
                let name = executableURL?.lastPathComponent ?? "a process"
                throw PeerProcess.Failure(description: "\(name) \(arguments ?? []) did not exit within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Ends the child: `signal` to it (nil: none, it was asked to exit another way), up to
    /// `grace` for it to exit, then SIGKILL to it and everything it started (Foundation gives
    /// each child a process group of its own) and up to 10 seconds more. It runs to its end in
    /// a cancelled task too (it is cleanup) and takes no longer than that. Whether it ended.
    @discardableResult
    package func end(signal: Int32? = SIGTERM, grace: Duration = .seconds(5)) async -> Bool {
        await Task { await self.endUncancelled(signal: signal, grace: grace) }.value
    }

    private func endUncancelled(signal: Int32?, grace: Duration) async -> Bool {
        let pid = processIdentifier
        // Never 0 or less: kill(0, …) would signal the test process's own group.
        guard pid > 0 else { return true }
        if let signal, !hasExited { Glibc.kill(pid, signal) }
        if await waitForExit(within: grace) { return true }
        Glibc.kill(getpgid(pid) == pid ? -pid : pid, SIGKILL)
        return await waitForExit(within: .seconds(10))
    }
}
