import Foundation
import InternalProtocol
import NIOCore
import NIOWebSocket
import Permissions
import TestSupport
import Testing

@testable import MessagingService

/// Real-time channel messages (issue 17, first increment) through the gateway with PyPI's
/// python-socketio (Engine.IO 4) and a raw WebSocket speaking Engine.IO 3: the lookup, the
/// namespace connect, channel joins, messages published over REST delivered with selectors and
/// subtopics, rights applied (and re-applied after a token change), and refusals.
@Suite(.timeLimit(.minutes(20))) struct RealTimeTests {
    static func publish(_ cluster: TestCluster, _ channel: String, _ body: String) async throws -> String {
        let published = try await cluster.send(.POST, "/messaging/\(channel)", body)
        guard let id = published.json["messageId"] as? String else {
            throw PubSubTestFailure(description: published.text)
        }
        return id
    }

    @Test func theLookupAndInfoNameTheGatewayAsTheRealTimeServer() async throws {
        try await TestCluster.shared { cluster async throws in
            let lookup = try await cluster.send(.GET, "/rt/lookup")
            #expect(lookup.text == "\"http://127.0.0.1:\(cluster.port)\"", "\(lookup.text)")
            #expect(
                try await cluster.send(.GET, "/info").json["rtURL"] as? String == "http://127.0.0.1:\(cluster.port)")
        }
    }

    @Test func channelMessagesReachSubscribersThroughSelectorsAndSubtopics() async throws {
        try await TestCluster.shared { cluster async throws in
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                client in
                try client.emit("SUB_ON", #"{"id": "C1", "name": "PUB_SUB_CONNECT", "options": {"channel": "chat"}}"#)
                try client.emit("SUB_ON", #"{"id": "M1", "name": "PUB_SUB_MESSAGES", "options": {"channel": "chat"}}"#)
                try client.emit(
                    "SUB_ON",
                    #"{"id": "M2", "name": "PUB_SUB_MESSAGES", "options": {"channel": "chat", "selector": "foo > 10"}}"#
                )
                try client.emit(
                    "SUB_ON",
                    #"{"id": "M3", "name": "PUB_SUB_MESSAGES", "options": {"channel": "chat", "subtopic": "news.*", "event": "PUB_SUB_MESSAGES"}}"#
                )
                try client.emit("SUB_ON", #"{"id": "O1", "name": "PUB_SUB_MESSAGES", "options": {"channel": "other"}}"#)
                try await client.wait { events in
                    ["C1", "M1", "M2", "M3", "O1"].allSatisfy { id in
                        events.contains {
                            $0.name == "SUB_READY" && ($0.data as? [String: Any])?["id"] as? String == id
                        }
                    }
                }
                #expect(try client.payloads("SUB_RES", id: "C1").first?["data"] as? String == "connected")

                let ids = [
                    try await Self.publish(cluster, "chat", #"{"message": "a", "headers": {"foo": "20"}}"#),
                    try await Self.publish(cluster, "chat", #"{"message": "b", "headers": {"foo": "5"}}"#),
                    try await Self.publish(
                        cluster, "chat", #"{"message": "c", "subtopic": "news.sport", "publisherId": "ann"}"#),
                    try await Self.publish(cluster, "chat", #"{"message": {"x": 1}, "subtopic": "news"}"#),
                ]
                try await client.wait { _ in (try? client.payloads("SUB_RES", id: "M1").count) == 4 }
                let all = try client.payloads("SUB_RES", id: "M1").compactMap { $0["data"] as? [String: Any] }
                #expect(all.map { $0["messageId"] as? String } == ids)
                #expect(
                    all.first?["message"] as? String == "a"
                        && (all.first?["headers"] as? [String: Any])?["foo"] as? String == "20")
                #expect(all.first?["timestamp"] as? Int != nil && all.first?["publishAt"] as? Int == 0)
                #expect(all[2]["publisherId"] as? String == "ann" && all[2]["subtopic"] as? String == "news.sport")
                #expect((all[3]["message"] as? [String: Any])?["x"] as? Int == 1)

                // M1 leaves; the next message reaches M2 only, which shows M1 would have had it.
                try client.emit("SUB_OFF", #"{"id": "M1"}"#)
                // SUB_OFF has no answer; a method's answer, which comes after it, shows it was handled.
                try client.emit("MET_REQ", #"{"id": "SYNC", "name": "SYNC", "options": {}}"#)
                try await client.wait { _ in (try? client.payloads("MET_RES", id: "SYNC").count) == 1 }
                let last = try await Self.publish(cluster, "chat", #"{"message": "d", "headers": {"foo": "50"}}"#)
                try await client.wait { _ in (try? client.payloads("SUB_RES", id: "M2").count) == 2 }
                #expect(
                    try client.payloads("SUB_RES", id: "M2").compactMap {
                        ($0["data"] as? [String: Any])?["messageId"] as? String
                    } == [ids[0], last])
                #expect(
                    try client.payloads("SUB_RES", id: "M3").compactMap {
                        ($0["data"] as? [String: Any])?["message"] as? String
                    } == ["c"])
                #expect(try client.payloads("SUB_RES", id: "M1").count == 4)
                #expect(try client.payloads("SUB_RES", id: "O1").isEmpty)
            }
        }
    }

    @Test func subscriptionsAreRefusedWithTheProtocolsError() async throws {
        try await TestCluster.shared { cluster async throws in
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.rest]!)
            { client in
                let refusals: [(String, String, Int)] = [
                    ("E1", #"{"name": "RSO_CONNECT", "options": {"name": "x"}}"#, 5020),
                    ("E2", #"{"name": "PUB_SUB_MESSAGES", "options": {"channel": "a/b"}}"#, 5010),
                    ("E3", #"{"name": "PUB_SUB_MESSAGES", "options": {"channel": "chat", "selector": "foo >"}}"#, 5013),
                    ("E4", #"{"name": "PUB_SUB_MESSAGES", "options": {}}"#, 5010),
                    ("E5", #"{"name": "PUB_SUB_MESSAGES", "options": {"channel": "chat", "subtopic": "a..b"}}"#, 5012),
                ]
                for (id, body, _) in refusals { try client.emit("SUB_ON", #"{"id": "\#(id)", \#(body.dropFirst())"#) }
                try client.emit("MET_REQ", #"{"id": "R1", "name": "FLY", "options": {}}"#)
                try await client.wait { _ in
                    refusals.allSatisfy { (try? client.payloads("SUB_RES", id: $0.0).isEmpty) == false }
                }
                for (id, _, code) in refusals {
                    let error = try client.payloads("SUB_RES", id: id).first?["error"] as? [String: Any]
                    #expect(
                        error?["code"] as? Int == code && error?["message"] is String,
                        "\(id): \(String(describing: error))")
                    #expect(try client.payloads("SUB_READY", id: id).isEmpty)
                }
                try await client.wait { _ in (try? client.payloads("MET_RES", id: "R1").isEmpty) == false }
                #expect(
                    (try client.payloads("MET_RES", id: "R1").first?["error"] as? [String: Any])?["code"] as? String
                        == "5021")
            }
            await #expect(throws: RTClient.Refused.self) {
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: "not-a-key") { _ in }
            }
        }
    }

    @Test func rightsDecideWhoReceivesAndFollowAChangedUserToken() async throws {
        try await TestCluster.shared { cluster async throws in
            try await cluster.setChannelCell("private", #""role": "NotAuthenticatedUser""#, .subscribe, .deny)
            let ann = try await cluster.account("ann@example.com")
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!) {
                guest in
                try await RTClient.with(
                    gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!, token: ann.token
                ) { member in
                    for client in [guest, member] {
                        try client.emit(
                            "SUB_ON", #"{"id": "P", "name": "PUB_SUB_MESSAGES", "options": {"channel": "private"}}"#)
                    }
                    try await member.wait { _ in (try? member.payloads("SUB_READY", id: "P").isEmpty) == false }
                    try await guest.wait { _ in (try? guest.payloads("SUB_RES", id: "P").isEmpty) == false }
                    #expect(
                        (try guest.payloads("SUB_RES", id: "P").first?["error"] as? [String: Any])?["code"] as? Int
                            == 5016)

                    // The guest logs in on the open connection and may subscribe now.
                    try guest.emit(
                        "MET_REQ", #"{"id": "T", "name": "SET_USER_TOKEN", "options": {"userToken": "\#(ann.token)"}}"#)
                    try await guest.wait { _ in (try? guest.payloads("MET_RES", id: "T").isEmpty) == false }
                    #expect(try guest.payloads("MET_RES", id: "T").first?.keys.contains("result") == true)
                    try guest.emit(
                        "SUB_ON", #"{"id": "P2", "name": "PUB_SUB_MESSAGES", "options": {"channel": "private"}}"#)
                    try await guest.wait { _ in (try? guest.payloads("SUB_READY", id: "P2").isEmpty) == false }

                    let id = try await Self.publish(cluster, "private", #"{"message": "secret"}"#)
                    for (client, subscription) in [(member, "P"), (guest, "P2")] {
                        try await client.wait { _ in
                            (try? client.payloads("SUB_RES", id: subscription).isEmpty) == false
                        }
                        #expect(
                            (try client.payloads("SUB_RES", id: subscription).first?["data"] as? [String: Any])?[
                                "messageId"] as? String == id)
                    }

                    // Revoking the right stops delivery to live subscriptions.
                    try await cluster.setChannelCell("private", #""role": "AuthenticatedUser""#, .subscribe, .deny)
                    try member.emit(
                        "SUB_ON", #"{"id": "open", "name": "PUB_SUB_MESSAGES", "options": {"channel": "open"}}"#)
                    try await member.wait { _ in (try? member.payloads("SUB_READY", id: "open").isEmpty) == false }
                    // Until messaging-service has heard of the change (a REST subscribe is refused).
                    while try await cluster.send(.POST, "/messaging/private/subscribe", "{}", token: ann.token).status
                        == 200
                    {
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    _ = try await Self.publish(cluster, "private", #"{"message": "after"}"#)
                    _ = try await Self.publish(cluster, "open", #"{"message": "marker"}"#)
                    try await member.wait { _ in (try? member.payloads("SUB_RES", id: "open").isEmpty) == false }
                    #expect(try member.payloads("SUB_RES", id: "P").count == 1)
                }
            }
        }
    }

    /// `MET_REQ PUB_SUB_COMMAND` reaches every `PUB_SUB_COMMANDS` subscriber of the channel (not
    /// of another), with its sender; PUBLISH rights apply, and a command too large is refused.
    @Test func channelCommandsReachTheChannelsCommandSubscribers() async throws {
        try await TestCluster.shared { cluster async throws in
            let ann = try await cluster.account("ann@example.com")
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { listener in
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key, token: ann.token)
                { sender in
                    try listener.emit(
                        "SUB_ON", #"{"id": "C", "name": "PUB_SUB_COMMANDS", "options": {"channel": "room"}}"#)
                    try listener.emit(
                        "SUB_ON", #"{"id": "O", "name": "PUB_SUB_COMMANDS", "options": {"channel": "other"}}"#)
                    try await listener.ready(["C", "O"])
                    try sender.emit(
                        "MET_REQ",
                        #"{"id": "T", "name": "PUB_SUB_COMMAND", "options": {"channel": "room", "type": "typing", "data": {"who": "ann"}}}"#
                    )
                    try await sender.wait { _ in (try? sender.payloads("MET_RES", id: "T").isEmpty) == false }
                    #expect(try sender.payloads("MET_RES", id: "T").first?.keys.contains("result") == true)
                    try await listener.wait { _ in (try? listener.payloads("SUB_RES", id: "C").isEmpty) == false }
                    let command = try #require(
                        try listener.payloads("SUB_RES", id: "C").first?["data"] as? [String: Any])
                    #expect(
                        command["type"] as? String == "typing"
                            && (command["data"] as? [String: Any])?["who"] as? String == "ann")
                    #expect(command["userId"] as? String == ann.id && command["connectionId"] is String)
                    #expect((command["userInfo"] as? [String: Any])?["userId"] as? String == ann.id)

                    // Without PUBLISH on the channel, or too large: refused, nothing delivered.
                    try await cluster.setChannelCell("room", #""role": "AuthenticatedUser""#, .publish, .deny)
                    try sender.emit(
                        "MET_REQ",
                        #"{"id": "D", "name": "PUB_SUB_COMMAND", "options": {"channel": "room", "type": "typing"}}"#)
                    let large = String(repeating: "x", count: 8_000)
                    try sender.emit(
                        "MET_REQ",
                        #"{"id": "L", "name": "PUB_SUB_COMMAND", "options": {"channel": "other", "type": "t", "data": "\#(large)"}}"#
                    )
                    try await sender.wait { _ in
                        ["D", "L"].allSatisfy { (try? sender.payloads("MET_RES", id: $0).isEmpty) == false }
                    }
                    #expect(
                        (try sender.payloads("MET_RES", id: "D").first?["error"] as? [String: Any])?["code"] as? String
                            == "5007")
                    #expect(
                        (try sender.payloads("MET_RES", id: "L").first?["error"] as? [String: Any])?["code"] as? String
                            == "5028")
                    try sender.emit(
                        "MET_REQ",
                        #"{"id": "M", "name": "PUB_SUB_COMMAND", "options": {"channel": "other", "type": "last"}}"#)
                    try await listener.wait { _ in (try? listener.payloads("SUB_RES", id: "O").isEmpty) == false }
                    #expect(try listener.payloads("SUB_RES", id: "C").count == 1, "the refused command went nowhere")
                    #expect(
                        (try listener.payloads("SUB_RES", id: "O").first?["data"] as? [String: Any])?["type"] as? String
                            == "last")
                }
            }
        }
    }

    /// A client asking for 10,000 subscriptions on one socket gets the first 500 (the default
    /// limit) and 5022 for every other, is slowed rather than dropped while its answers queue,
    /// keeps its connection, and another client on the same gateway notices nothing.
    @Test func tenThousandSubscriptionsOnOneSocketAreBoundedAndHarmNoOne() async throws {
        try await TestCluster.shared { cluster async throws in
            let key = cluster.app.keys[.js]!
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { flood in
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: key) { bystander in
                    try bystander.emit(
                        "SUB_ON", #"{"id": "B", "name": "PUB_SUB_MESSAGES", "options": {"channel": "quiet"}}"#)
                    for index in 0..<10_000 {
                        try flood.emit(
                            "SUB_ON",
                            #"{"id": "S\#(index)", "name": "PUB_SUB_MESSAGES", "options": {"channel": "flood"}}"#)
                    }
                    try await flood.wait(for: .seconds(240)) { events in events.count >= 10_001 }
                    let answers = try flood.events()
                    let ready = answers.filter { $0.name == "SUB_READY" }.count
                    let refused = answers.filter {
                        (($0.data as? [String: Any])?["error"] as? [String: Any])?["code"] as? Int == 5022
                    }
                    #expect(ready == 500 && refused.count == 9_500, "\(ready) ready, \(refused.count) refused")
                    #expect(!answers.contains { $0.name == "disconnect" })
                    // Both connections still deliver.
                    _ = try await Self.publish(cluster, "flood", #"{"message": "still here"}"#)
                    _ = try await Self.publish(cluster, "quiet", #"{"message": "undisturbed"}"#)
                    try await flood.wait { events in
                        events.filter {
                            $0.name == "SUB_RES" && (($0.data as? [String: Any])?["data"] as? [String: Any]) != nil
                        }.count == 500
                    }
                    try await bystander.wait { _ in (try? bystander.payloads("SUB_RES", id: "B").count) == 1 }
                }
            }
        }
    }

    /// One timer beats every session: an Engine.IO 4 client is pinged every interval and kept
    /// while it answers; silent for interval and timeout together, it is sent the close packet
    /// and the socket closes. (A 3 s timeout: on a busy machine an answer may take a while.)
    @Test func sessionsArePingedAndASilentOneIsClosed() async throws {
        let heartbeat = ["BAAS_RT_PING_INTERVAL_MS": "300", "BAAS_RT_PING_TIMEOUT_MS": "3000"]
        try await TestCluster.with(environment: heartbeat) { cluster async throws in
            let path = "/\(cluster.app.id)/?EIO=4&transport=websocket&apiKey=\(cluster.app.keys[.rest]!)"
            let socket = try #require(try await WebSocketTestClient.connect(port: cluster.port, path: path))
            try await socket.executeThenClose { inbound, outbound in
                var raw = RawFrames(inbound, outbound)
                #expect(try await raw.next()?.contains(#""pingInterval":300"#) == true)
                // Answered pings keep the session past interval and timeout together.
                for _ in 0..<15 {
                    #expect(try await raw.next() == "2")
                    try await raw.send("3")
                }
                // Unanswered, they end it.
                var heard: [String] = []
                while let frame = try await raw.next() {
                    heard.append(frame)
                    if frame.hasPrefix("close:") { break }
                }
                #expect(heard.last == "close:1000" && heard.dropLast().last == "1", "\(heard)")
                #expect(heard.dropLast(2).allSatisfy { $0 == "2" }, "\(heard)")
            }
        }
    }

    @Test func engineIO3OverARawWebSocketAndMalformedFrames() async throws {
        try await TestCluster.shared { cluster async throws in
            let path = "/\(cluster.app.id)/?EIO=3&transport=websocket&apiKey=\(cluster.app.keys[.rest]!)&userToken=null"
            let socket = try #require(try await WebSocketTestClient.connect(port: cluster.port, path: path))
            try await socket.executeThenClose { inbound, outbound in
                var raw = RawFrames(inbound, outbound)
                let open = try #require(try await raw.next())
                #expect(
                    open.hasPrefix("0{") && open.contains("\"pingInterval\"") && !open.contains("maxPayload"), "\(open)"
                )
                #expect(try await raw.next() == "40")
                try await raw.send("2")
                #expect(try await raw.next() == "3")
                try await raw.send("40/wrong,")
                #expect(try await raw.next() == #"44/wrong,"Invalid namespace: connect to /\#(cluster.app.id)""#)
                try await raw.send("40/\(cluster.app.id)?apiKey=x&clientId=c,")
                #expect(try await raw.next() == "40/\(cluster.app.id),")
                try await raw.send(
                    #"42/\#(cluster.app.id),["SUB_ON",{"id":"S","name":"PUB_SUB_MESSAGES","options":{"channel":"raw"}}]"#
                )
                #expect(try await raw.next() == #"42/\#(cluster.app.id),["SUB_READY",{"id":"S"}]"#)
                _ = try await Self.publish(cluster, "raw", #"{"message": 1}"#)
                #expect(
                    try await raw.next()?.hasPrefix(#"42/\#(cluster.app.id),["SUB_RES",{"id":"S","data":{"messageId":"#)
                        == true)
                // Not Socket.IO: the connection ends with a protocol error, as socket.io servers do.
                try await raw.send("4Z")
                #expect(try await raw.next() == "close:1002")
            }
            // Other sockets on the same gateway are unaffected, and a polling transport is refused.
            let refused = try await WebSocketTestClient.connect(
                port: cluster.port, path: "/\(cluster.app.id)/?EIO=3&transport=websocket&apiKey=wrong")
            #expect(refused == nil)
        }
    }
}

/// A raw WebSocket's frames as text: a text frame's text, a close as `close:CODE`.
struct RawFrames {
    private var frames: NIOAsyncChannelInboundStream<WebSocketFrame>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>

    init(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>,
        _ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    ) {
        frames = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    mutating func next() async throws -> String? {
        guard let frame = try await frames.next() else { return nil }
        return frame.opcode == .text
            ? String(buffer: frame.unmaskedData) : "close:\(WebSocketTestClient.code(of: frame) ?? 0)"
    }

    func send(_ text: String) async throws {
        try await outbound.write(WebSocketTestClient.frame(.text, ByteBuffer(string: text)))
    }
}
