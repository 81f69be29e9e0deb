import Foundation

/// A real-time client for one test: `Tests/Peers/rt-client.py` (PyPI's python-socketio)
/// connected through the gateway, sending the events it is told on its standard input and
/// recording every event it receives.
package final class RTClient: @unchecked Sendable {
    private let process: Process
    private let input: Pipe
    private let folder: URL

    private init(process: Process, input: Pipe, folder: URL) {
        self.process = process
        self.input = input
        self.folder = folder
    }

    /// Connects to `gatewayURL` as app `app` with `key` (and the user `token`) as client
    /// `clientID` over `transports` (`polling,websocket`: long-polling first, then the upgrade,
    /// as the SDKs connect), runs `body`, disconnects. With `reconnect` a lost connection is
    /// opened again and every subscription sent again, as the SDKs do. A refused connection
    /// throws ``Refused`` with the client's words.
    package static func with<Result: Sendable>(
        gatewayURL: String, app: String, key: String, token: String? = nil, clientID: String = UUID().uuidString,
        reconnect: Bool = false, transports: String = "websocket", _ body: (RTClient) async throws -> Result
    ) async throws -> Result {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rt-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                "python3", PeerProcess.repository.appendingPathComponent("Tests/Peers/rt-client.py").path,
                "--url", gatewayURL, "--app", app, "--key", key, "--out", folder.path, "--client-id", clientID,
                "--transports", transports,
            ]
            + (token.map { ["--token", $0] } ?? []) + (reconnect ? ["--reconnect"] : [])
        let input = Pipe()
        process.standardInput = input
        let log = folder.appendingPathComponent("client.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        let client = RTClient(process: process, input: input, folder: folder)
        do {
            try await client.waitUntilConnected(log: log)
            let result = try await body(client)
            await client.stop()
            return result
        } catch {
            await client.stop()
            throw error
        }
    }

    /// The connection was refused: the client's words.
    package struct Refused: Error, CustomStringConvertible {
        package let description: String
    }

    private func waitUntilConnected(log: URL) async throws {
        for _ in 0..<1_200 {
            if FileManager.default.fileExists(atPath: folder.appendingPathComponent("ready").path) { return }
            if let reason = try? String(contentsOf: folder.appendingPathComponent("failed"), encoding: .utf8) {
                throw Refused(description: reason)
            }
            guard !process.hasExited else {
                let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
                throw PeerProcess.Failure(
                    description: "rt-client.py exited (is python-socketio installed?): \(output.suffix(2_000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PeerProcess.Failure(description: "rt-client.py did not connect within a minute")
    }

    /// Sends event `name` with `data` (a JSON object as text) on the app's namespace.
    package func emit(_ name: String, _ data: String) throws {
        try write(#"{"emit": "\#(name)", "data": \#(data)}"#)
    }

    /// Ends the client at once (SIGKILL), as a phone losing its network would: its socket is
    /// dropped without a close.
    package func kill() async {
        await process.end(signal: SIGKILL)
    }

    /// Records the transport in use as a `transport` event (`polling` or `websocket`).
    package func recordTransport() throws {
        try write(#"{"transport": true}"#)
    }

    /// Leaves the namespace.
    package func disconnect() throws {
        try write(#"{"disconnect": true}"#)
    }

    private func write(_ line: String) throws {
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Every event received so far, oldest first: `(name, payload)`.
    package func events() throws -> [(name: String, data: Any?)] {
        guard let text = try? String(contentsOf: folder.appendingPathComponent("events.jsonl"), encoding: .utf8) else {
            return []
        }
        // The peer may be writing the last line as it is read: only whole lines count.
        return try text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map { line in
            let object =
                try JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any]
                ?? [:]
            return (object["event"] as? String ?? "", object["data"].flatMap { $0 is NSNull ? nil : $0 })
        }
    }

    /// The payloads of `name` events for subscription or request `id`.
    package func payloads(_ name: String, id: String) throws -> [[String: Any]] {
        try events().compactMap { event in
            guard event.name == name, let data = event.data as? [String: Any], data["id"] as? String == id else {
                return nil
            }
            return data
        }
    }

    /// Waits until `condition` holds over the events; after `limit` (generous: the machine may
    /// be busy with every other suite) it fails with what arrived, so a lost event is reported
    /// as one rather than as the suite's time limit.
    package func wait(
        for limit: Duration = .seconds(90), until condition: ([(name: String, data: Any?)]) -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while !(try condition(events())) {
            guard !process.hasExited else { throw PeerProcess.Failure(description: "rt-client.py exited") }
            guard ContinuousClock.now < deadline else {
                let received = try events().map { "\($0.name) \($0.data.map { "\($0)" } ?? "")" }
                throw PeerProcess.Failure(
                    description: "the awaited events did not arrive; received: \(received.suffix(40))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Closes the client's input (it disconnects and exits), ending it after two seconds (at
    /// once when the task is cancelled); bounded either way.
    private func stop() async {
        try? input.fileHandleForWriting.close()
        if await process.waitForExit(within: .seconds(2)) { return }
        await process.end()
    }
}
