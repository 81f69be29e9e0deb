import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Two gateways and two messaging-services on one database (the cluster's, and a replica pair
/// run as processes): subscribers on either receive every data change event they should, once,
/// in commit order per object, whichever gateway the write came through — across a restart of
/// one messaging-service while writes go on.
@Suite(.timeLimit(.minutes(20))) struct RealTimeReplicaTests {
    static let objects = 8
    static let rounds = 6

    @Test func everySubscriberOnEitherReplicaGetsEveryEventOnceInOrderAcrossARestart() async throws {
        let window = ["BAAS_RT_RESUME_WINDOW_MS": "300000"]
        try await TestCluster.with(environment: window, timeLimit: .seconds(540)) { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Counter", #"{"k": -1, "v": 0}"#)
            try await ServiceReplica.with(cluster: cluster, environment: window) { replica in
                let key = cluster.app.keys[.js]!
                func connect<R: Sendable>(_ url: String, _ body: (RTClient) async throws -> R) async throws -> R {
                    try await RTClient.with(gatewayURL: url, app: cluster.app.id, key: key, reconnect: true, body)
                }
                try await connect(cluster.gatewayURL) { a1 in
                    try await connect(cluster.gatewayURL) { a2 in
                        try await connect(replica.gatewayURL) { b1 in
                            try await connect(replica.gatewayURL) { b2 in
                                try await Self.run(
                                    cluster: cluster, replica: replica, all: [a1, a2, b1, b2], restarted: [b1, b2])
                            }
                        }
                    }
                }
            }
        }
    }

    /// A restart closes sockets cleanly, so clients reconnect: a messaging-service stopped with
    /// SIGTERM closes its sessions with 1001 through the gateway, and a gateway stopped the same
    /// way closes its connections with 1001 through the service; both processes exit.
    @Test func aProcessThatStopsClosesItsSocketsWith1001() async throws {
        try await TestCluster.with(timeLimit: .seconds(360)) { cluster async throws in
            try await ServiceReplica.with(cluster: cluster) { replica in
                let port = try #require(URLComponents(string: replica.gatewayURL)?.port)
                let path = "/\(cluster.app.id)/?EIO=4&transport=websocket&apiKey=\(cluster.app.keys[.rest]!)"
                func closeCode(stopping stop: @escaping @Sendable () async -> Void) async throws -> [String] {
                    // A restarted messaging-service takes upgrades again once the gateway's lane to
                    // it is back: until then the gateway refuses them (bounded: 60 s).
                    var upgraded = try await WebSocketTestClient.connect(port: port, path: path)
                    for _ in 0..<300 where upgraded == nil {
                        try await Task.sleep(for: .milliseconds(200))
                        upgraded = try await WebSocketTestClient.connect(port: port, path: path)
                    }
                    let socket = try #require(upgraded)
                    return try await socket.executeThenClose { inbound, outbound in
                        var raw = RawFrames(inbound, outbound)
                        #expect(try await raw.next()?.hasPrefix("0{") == true)
                        async let stopped: Void = stop()
                        var heard: [String] = []
                        while let frame = try await raw.next() {
                            heard.append(frame)
                            if frame.hasPrefix("close:") { break }
                        }
                        try? await outbound.write(WebSocketTestClient.close(code: 1000))
                        await stopped
                        return heard
                    }
                }
                #expect(try await closeCode { await replica.stopMessaging() }.last == "close:1001")
                try await replica.startMessaging()
                #expect(try await closeCode { await replica.stopGateway() }.last == "close:1001")
            }
        }
    }

    /// Subscribes every client (the second of each pair with a where clause), writes through both
    /// gateways with the replica's messaging-service restarted in the middle, and checks what each
    /// client received.
    static func run(cluster: TestCluster, replica: ServiceReplica, all clients: [RTClient], restarted: [RTClient])
        async throws
    {
        for (index, client) in clients.enumerated() {
            let clause = index % 2 == 1 ? "k < 4" : nil
            try client.subscribe("C", "created", "Counter", where: clause)
            try client.subscribe("U", "updated", "Counter", where: clause)
        }
        for client in clients { try await client.ready(["C", "U"]) }
        let metrics = try await replica.messagingMetrics()
        #expect(
            metrics.contains(#"baas_rt_subscriptions{kind="data"} 4"#),
            "\(metrics.split(separator: "\n").filter { $0.contains("rt_") })")
        #expect(metrics.contains("baas_rt_connections 2"))

        let gateways = [cluster.gatewayURL + cluster.prefix(), replica.gatewayURL + cluster.prefix()]
        func write(_ method: HTTPMethod, _ path: String, _ body: String, through gateway: Int) async throws -> [String:
            any Sendable]
        {
            let answer = try await HTTPTestClient.send(
                method, gateways[gateway % 2] + path, headers: [("Content-Type", "application/json")],
                body: Data(body.utf8))
            #expect(answer.status == 200, "\(method) \(path): \(answer.text)")
            return answer.json
        }
        var ids: [String] = []
        for k in 0..<objects {
            ids.append(
                try #require(
                    try await write(.POST, "/data/Counter", #"{"k": \#(k), "v": 0}"#, through: k)["objectId"] as? String
                ))
        }
        func round(_ v: Int) async throws {
            for (k, id) in ids.enumerated() {
                _ = try await write(.PUT, "/data/Counter/\(id)", #"{"v": \#(v)}"#, through: k + v)
            }
        }
        for v in 1...2 { try await round(v) }
        // Rounds 3 and 4 are written while the replica's messaging-service is down: its clients
        // reconnect once it is back and resume where their subscriptions stood.
        await replica.stopMessaging()
        for v in 3...4 { try await round(v) }
        try await replica.startMessaging()
        for v in 5...rounds { try await round(v) }

        for client in clients {
            try await client.wait { _ in
                (try? client.data("U").contains {
                    ($0 as? [String: Any])?["v"] as? Int == rounds && ($0 as? [String: Any])?["k"] as? Int == 0
                }) == true
            }
        }
        // A last write: once every client has it, each has had every event before it.
        _ = try await write(.PUT, "/data/Counter/\(ids[0])", #"{"v": 99}"#, through: 0)
        for client in clients {
            try await client.wait { _ in (try? client.integers("U", "v").last) == 99 }
        }
        for (index, client) in clients.enumerated() {
            let visible = index % 2 == 1 ? Array(0..<4) : Array(0..<objects)
            let created = try client.integers("C", "k")
            #expect(created == visible, "client \(index): created \(created)")
            let updates = try client.data("U").compactMap { $0 as? [String: Any] }
            for k in visible {
                let versions = updates.filter { $0["k"] as? Int == k }.compactMap { $0["v"] as? Int }
                let expected = Array(1...rounds) + (k == 0 ? [99] : [])
                #expect(versions == expected, "client \(index), object \(k): \(versions)")
            }
            #expect(updates.allSatisfy { visible.contains($0["k"] as? Int ?? -1) })
        }
        for client in restarted {
            let connects = try client.events().filter { $0.name == "connect" }.count
            #expect(connects == 2, "the replica's clients reconnected once: \(connects)")
        }
    }
}
