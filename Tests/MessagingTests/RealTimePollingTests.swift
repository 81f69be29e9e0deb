import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Engine.IO's long-polling, which the JS and Swift SDKs start with: PyPI's python-socketio
/// polling only, and polling then upgrading to a WebSocket (as the SDKs do), receive channel
/// messages and data changes; Engine.IO 3's length-prefixed payloads spoken by hand; unknown
/// sessions and bad payloads refused.
@Suite(.timeLimit(.minutes(20))) struct RealTimePollingTests {
    @Test(arguments: ["polling", "polling,websocket"])
    func pollingClientsReceiveWhatWebSocketClientsDo(_ transports: String) async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Item", #"{"n": 0}"#)
            try await RTClient.with(
                gatewayURL: cluster.gatewayURL, app: cluster.app.id, key: cluster.app.keys[.js]!, transports: transports
            ) { client in
                try client.subscribe("D", "created", "Item", where: "n > 1")
                try client.emit("SUB_ON", #"{"id": "M", "name": "PUB_SUB_MESSAGES", "options": {"channel": "news"}}"#)
                try await client.ready(["D", "M"])
                for n in 1...3 { _ = try await cluster.send(.POST, "/data/Item", #"{"n": \#(n)}"#) }
                #expect(try await cluster.send(.POST, "/messaging/news", #"{"message": "hello"}"#).status == 200)
                try await client.wait { _ in
                    (try? client.integers("D", "n")) == [2, 3] && (try? client.payloads("SUB_RES", id: "M").count) == 1
                }
                try client.recordTransport()
                try await client.wait { events in events.contains { $0.name == "transport" } }
                let transport = try client.events().last { $0.name == "transport" }?.data as? String
                #expect(
                    transport == (transports == "polling" ? "polling" : "websocket"),
                    "\(transports) ended on \(transport ?? "?")")
            }
        }
    }

    @Test func engineIO3PayloadsByHandAndRefusals() async throws {
        try await TestCluster.shared { cluster async throws in
            let app = cluster.app.id
            let base = "\(cluster.gatewayURL)/\(app)/?EIO=3&transport=polling&apiKey=\(cluster.app.keys[.rest]!)"
            func get(_ query: String = "") async throws -> HTTPResult {
                try await HTTPTestClient.send(.GET, base + query)
            }
            func post(_ sid: String, _ body: String) async throws -> HTTPResult {
                try await HTTPTestClient.send(
                    .POST, base + "&sid=\(sid)", headers: [("Content-Type", "text/plain")], body: Data(body.utf8))
            }
            /// `<len>:<packet>…` read back into packets.
            func packets(_ text: String) -> [String] {
                var packets: [String] = []
                var rest = Substring(text)
                while let colon = rest.firstIndex(of: ":"), let length = Int(rest[..<colon]) {
                    let body = rest[rest.index(after: colon)...]
                    let end = body.utf16.index(body.startIndex, offsetBy: length)
                    packets.append(String(body[..<end]))
                    rest = body[end...]
                }
                return packets
            }
            let opened = try await get()
            let handshake = packets(opened.text)
            #expect(handshake.first?.hasPrefix("0{") == true, "\(opened.text)")
            let open = try JSONSerialization.jsonObject(with: Data(handshake[0].dropFirst().utf8)) as? [String: Any]
            let sid = try #require(open?["sid"] as? String)
            #expect(open?["upgrades"] as? [String] == ["websocket"])

            // Revision 3: the default namespace is connected at once (here or in the next poll).
            var connected = Array(handshake.dropFirst())
            if connected.isEmpty { connected = packets(try await get("&sid=\(sid)").text) }
            #expect(connected == ["40"], "\(connected)")
            let join = "40/\(app),"
            #expect(try await post(sid, "\(join.utf16.count):\(join)").text == "ok")
            #expect(packets(try await get("&sid=\(sid)").text) == ["40/\(app),"])
            let subscribe = #"42/\#(app),["SUB_ON",{"id":"S","name":"PUB_SUB_MESSAGES","options":{"channel":"notes"}}]"#
            #expect(try await post(sid, "1:2\(subscribe.utf16.count):\(subscribe)").text == "ok")
            var received: [String] = []
            for _ in 0..<20 where !received.contains(where: { $0.contains("SUB_READY") }) {
                received += packets(try await get("&sid=\(sid)").text)
            }
            #expect(received.contains("3"), "the ping posted with the subscription is answered: \(received)")
            _ = try await cluster.send(.POST, "/messaging/notes", #"{"message": "é"}"#)
            var delivered: [String] = []
            for _ in 0..<20 where !delivered.contains(where: { $0.contains("SUB_RES") }) {
                delivered += packets(try await get("&sid=\(sid)").text)
            }
            #expect(delivered.contains { $0.contains(#""message":"é""#) }, "\(delivered)")

            // python-engineio 3 posts in its binary framing: a ping, answered.
            let framed = try await HTTPTestClient.send(
                .POST, base + "&sid=\(sid)", headers: [("Content-Type", "application/octet-stream")],
                body: Data([0x00, 0x01, 0xFF, 0x32]))
            #expect(framed.text == "ok")
            var pong: [String] = []
            for _ in 0..<20 where !pong.contains("3") { pong += packets(try await get("&sid=\(sid)").text) }
            #expect(pong.contains("3"))

            // Refusals: an unknown session, a payload that is not one, a missing transport.
            let unknown = try await get("&sid=nope")
            #expect(unknown.status == 400 && unknown.json["code"] as? Int == 5024, "\(unknown.text)")
            let garbled = try await post(sid, "9:40")
            #expect(garbled.status == 400 && garbled.json["code"] as? Int == 5026, "\(garbled.text)")
            let noTransport = try await HTTPTestClient.send(
                .GET, "\(cluster.gatewayURL)/\(app)/?EIO=3&apiKey=\(cluster.app.keys[.rest]!)")
            #expect(noTransport.status == 400 && noTransport.json["code"] as? Int == 5025, "\(noTransport.text)")
            let badKey = try await HTTPTestClient.send(
                .GET, "\(cluster.gatewayURL)/\(app)/?EIO=3&transport=polling&apiKey=wrong")
            #expect(badKey.status == 401 || badKey.status == 403, "\(badKey.status) \(badKey.text)")
        }
    }

    /// WebSockets the endpoint cannot serve close with 1002: a revision it does not speak, an
    /// upgrade naming no session here, and an upgrade that skips Engine.IO's probe (the polling
    /// session it named goes on).
    @Test func webSocketsThatCannotBeServedCloseWith1002() async throws {
        try await TestCluster.shared { cluster async throws in
            let (app, key) = (cluster.app.id, cluster.app.keys[.rest]!)
            func firstFrames(_ query: String, sending: String? = nil) async throws -> [String] {
                let socket = try #require(
                    try await WebSocketTestClient.connect(port: cluster.port, path: "/\(app)/?\(query)&apiKey=\(key)"))
                return try await socket.executeThenClose { inbound, outbound in
                    var raw = RawFrames(inbound, outbound)
                    if let sending { try await raw.send(sending) }
                    var heard: [String] = []
                    while let frame = try await raw.next() {
                        heard.append(frame)
                        if frame.hasPrefix("close:") { break }
                    }
                    return heard
                }
            }
            #expect(try await firstFrames("EIO=9&transport=websocket") == ["close:1002"])
            #expect(try await firstFrames("EIO=4&transport=websocket&sid=nope") == ["close:1002"])
            let opened = try await HTTPTestClient.send(
                .GET, "\(cluster.gatewayURL)/\(app)/?EIO=4&transport=polling&apiKey=\(key)")
            let open =
                try JSONSerialization.jsonObject(with: Data(opened.text.dropFirst().prefix { $0 != "\u{1e}" }.utf8))
                as? [String: Any]
            let sid = try #require(open?["sid"] as? String, "\(opened.text)")
            #expect(try await firstFrames("EIO=4&transport=websocket&sid=\(sid)", sending: "2ping") == ["close:1002"])
            let poll = try await HTTPTestClient.send(
                .GET, "\(cluster.gatewayURL)/\(app)/?EIO=4&transport=polling&sid=\(sid)&apiKey=\(key)")
            #expect(poll.status == 200, "\(poll.text)")
        }
    }

    /// A session id is no credential (it travels in URLs that proxies and logs keep): only the
    /// caller that opened a polling session, with the same key and user session, may poll it,
    /// post to it or upgrade it (the second probe's F9).
    @Test func aPollingSessionServesOnlyItsOpener() async throws {
        try await TestCluster.shared { cluster async throws in
            let (app, rest, js) = (cluster.app.id, cluster.app.keys[.rest]!, cluster.app.keys[.js]!)
            let victim = try await cluster.account("victim@example.com")
            let base = "\(cluster.gatewayURL)/\(app)/?EIO=4&transport=polling"
            let owner = "&apiKey=\(rest)&userToken=\(victim.token)"
            let opened = try await HTTPTestClient.send(.GET, base + owner)
            let open =
                try JSONSerialization.jsonObject(with: Data(opened.text.dropFirst().prefix { $0 != "\u{1e}" }.utf8))
                as? [String: Any]
            let sid = try #require(open?["sid"] as? String, "\(opened.text)")

            let strangers = ["&apiKey=\(js)", "&apiKey=\(rest)", "&apiKey=\(js)&userToken=\(victim.token)"]
            for stranger in strangers {
                let polled = try await HTTPTestClient.send(.GET, base + "&sid=\(sid)" + stranger)
                #expect(polled.status == 400 && polled.json["code"] as? Int == 5024, "\(stranger): \(polled.text)")
                let join = "40/\(app),"
                let posted = try await HTTPTestClient.send(
                    .POST, base + "&sid=\(sid)" + stranger, headers: [("Content-Type", "text/plain")],
                    body: Data(join.utf8))
                #expect(posted.status == 400 && posted.json["code"] as? Int == 5024, "\(stranger): \(posted.text)")
                let socket = try #require(
                    try await WebSocketTestClient.connect(
                        port: cluster.port, path: "/\(app)/?EIO=4&transport=websocket&sid=\(sid)" + stranger))
                let frames = try await socket.executeThenClose { inbound, outbound in
                    var raw = RawFrames(inbound, outbound)
                    try await raw.send("2probe")
                    var heard: [String] = []
                    while let frame = try await raw.next() {
                        heard.append(frame)
                        if frame.hasPrefix("close:") { break }
                    }
                    return heard
                }
                #expect(frames == ["close:1002"], "\(stranger): \(frames)")
            }
            let polled = try await HTTPTestClient.send(.GET, base + "&sid=\(sid)" + owner)
            #expect(polled.status == 200, "\(polled.text)")
        }
    }
}
