import DataEngine
import Foundation
import NIOHTTP1
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import TestSupport
import Testing

@testable import MessagingService

/// Publish/subscribe through the gateway (issue 16, first increment): each SDK generation's
/// body shapes, subtopic wildcards and selectors against an oracle, each message handed to a
/// subscription once even to concurrent polls, and bad input refused.
@Suite(.timeLimit(.minutes(20))) struct PubSubTests {
    @Test func publishStatusSubscribeAndPoll() async throws {
        try await TestCluster.with { cluster async throws in
            // The 4.x SDK posts its SubscriptionOptions object; an empty body subscribes to everything.
            let subscribed = try await cluster.send(
                .POST, "/messaging/chat/subscribe", #"{"subscriberId": "me", "___class": "SubscriptionOptions"}"#)
            let all = try #require(subscribed.json["subscriptionId"] as? String, "\(subscribed.text)")
            let bare = try #require(
                try await cluster.send(.POST, "/messaging/chat/subscribe").json["subscriptionId"] as? String)
            // The JS SDK sends its options flat, unknown keys included.
            let published = try await cluster.send(
                .POST, "/messaging/chat",
                #"{"message": {"text": "hi"}, "publisherId": "ann", "headers": {"city": "Tokyo"}, "publishPolicy": "PUBSUB", "someFutureKey": 1}"#
            )
            // The JS SDK's messaging.js: delivery is asynchronous to the publisher, so the publish
            // answers `scheduled` with a string id and a null error; the status query moves on.
            #expect(published.json["status"] as? String == "scheduled", "\(published.text)")
            #expect(published.json["errorMessage"] is NSNull, "\(published.text)")
            let id = try #require(published.json["messageId"] as? String)
            #expect(id.hasPrefix("message:"))
            #expect(try await cluster.send(.GET, "/messaging/\(id)").json["status"] as? String == "published")
            #expect(try await cluster.send(.GET, "/messaging/message:nope").json["status"] as? String == "unknown")
            #expect(
                try await cluster.send(.POST, "/messaging/chat", #"{"message": "plain text", "pushPolicy": "PUBSUB"}"#)
                    .status == 200)

            let first = try await cluster.send(.GET, "/messaging/chat/\(all)")
            let messages = try #require(first.json["messages"] as? [[String: Any]], "\(first.text)")
            #expect(messages.count == 2)
            #expect(messages.first?["messageId"] as? String == id)
            #expect((messages.first?["data"] as? [String: Any])?["text"] as? String == "hi")
            #expect((messages.first?["headers"] as? [String: Any])?["city"] as? String == "Tokyo")
            #expect(messages.first?["publisherId"] as? String == "ann" && messages.first?["publishedAt"] is Int)
            #expect(messages.last?["data"] as? String == "plain text")
            #expect(
                (try await cluster.send(.GET, "/messaging/chat/\(all)").json["messages"] as? [Any])?.isEmpty == true,
                "handed out once")
            #expect(
                (try await cluster.send(.GET, "/messaging/chat/\(bare)").json["messages"] as? [Any])?.count == 2,
                "each subscription gets its own copy")
            let properties = try await cluster.send(.GET, "/messaging/chat/properties")
            #expect(properties.json["name"] as? String == "chat")

            let missing = try await cluster.send(.GET, "/messaging/chat/nope")
            #expect(missing.status == 404 && missing.json["code"] as? Int == 5014)
            #expect(try await cluster.send(.DELETE, "/messaging/channels/chat").json["code"] as? Int == 4000)
            #expect(
                try await cluster.send(.DELETE, "/messaging/channels/chat", key: .serverCode).json["result"] as? Bool
                    == true)
            #expect(
                try await cluster.send(.GET, "/messaging/chat/\(all)").json["code"] as? Int == 5014,
                "the channel's subscriptions went with it")
        }
    }

    @Test func subtopicsAndSelectorsMatchTheOracle() async throws {
        let seed = SeededGenerator.seed("PUBSUB_TEST_SEED")
        var random = SeededGenerator(seed: seed)
        let subscriptions = (0..<12).map { _ in
            (subtopic: RandomSubtopic.pattern(&random), selector: RandomSelector.make(&random))
        }
        let messages = (0..<1_000).map { index in
            (
                index: index, subtopic: RandomSubtopic.topic(&random),
                city: ["Tokyo", "Paris", "Lima", nil].randomElement(using: &random)!,
                n: Bool.random(using: &random) ? Int.random(in: 0...9, using: &random) : nil
            )
        }
        try await TestCluster.with { cluster async throws in
            var ids: [String] = []
            for subscription in subscriptions {
                var body: [String: Any] = [:]
                if let subtopic = subscription.subtopic { body["subtopic"] = subtopic }
                if let selector = subscription.selector { body["selector"] = selector.text }
                let answer = try await cluster.send(
                    .POST, "/messaging/feed/subscribe",
                    String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
                ids.append(try #require(answer.json["subscriptionId"] as? String, "\(body): \(answer.text)"))
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<4 {
                    group.addTask {
                        for message in messages where message.index % 4 == lane {
                            var headers: [String: Any] = [:]
                            if let city = message.city { headers["city"] = city }
                            if let n = message.n { headers["n"] = n }
                            var body: [String: Any] = ["message": message.index, "headers": headers]
                            if let subtopic = message.subtopic { body["subtopic"] = subtopic }
                            let answer = try await cluster.send(
                                .POST, "/messaging/feed",
                                String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self))
                            guard answer.status == 200 else { throw PubSubTestFailure(description: answer.text) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            for (subscription, id) in zip(subscriptions, ids) {
                let expected = Set(
                    messages.filter { message in
                        (subscription.subtopic.map { RandomSubtopic.matches($0, message.subtopic) } ?? true)
                            && (subscription.selector?.holds(city: message.city, n: message.n) ?? true)
                    }.map(\.index))
                let received = try await cluster.pollAll("feed", id)
                #expect(received.count == Set(received).count, "no message twice")
                #expect(
                    Set(received) == expected,
                    "seed \(seed): \(subscription.subtopic ?? "-") / \(subscription.selector?.text ?? "-")")
            }
        }
    }

    @Test func concurrentPollsHandOutEachMessageOnce() async throws {
        try await TestCluster.with { cluster async throws in
            let id = try #require(
                try await cluster.send(.POST, "/messaging/race/subscribe").json["subscriptionId"] as? String)
            let received = try await withThrowingTaskGroup(of: [Int].self) { group in
                group.addTask {
                    for index in 0..<300 {
                        _ = try await cluster.send(.POST, "/messaging/race", #"{"message": \#(index)}"#)
                    }
                    return []
                }
                for _ in 0..<3 {
                    group.addTask {
                        var mine: [Int] = []
                        for _ in 0..<60 { mine += try await cluster.poll("race", id) }
                        return mine
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let rest = try await cluster.pollAll("race", id)
            let all = received + rest
            #expect(all.count == 300 && Set(all) == Set(0..<300), "\(all.count) messages, \(Set(all).count) distinct")
        }
    }

    @Test func badInputIsRefused() async throws {
        try await TestCluster.with { cluster async throws in
            let tenThousand = "{" + (0..<10_000).map { "\"h\($0)\": 1" }.joined(separator: ",") + "}"
            let cases: [(HTTPMethod, String, String?, Int)] = [
                (.POST, "/messaging/bad%20name", #"{"message": 1}"#, 5010),
                (.POST, "/messaging/Settings", #"{"message": 1}"#, 5010),
                (.POST, "/messaging/PushTemplates", #"{"message": 1}"#, 5010),
                (.POST, "/messaging/chat", #"{"message": 1, "headers": \#(tenThousand)}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "headers": {"h": {"nested": 1}}}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "subtopic": "a..b"}"#, 5012),
                (.POST, "/messaging/chat", #"{"message": 1, "subtopic": "a.*"}"#, 5012),
                (.POST, "/messaging/chat", #"{"message": 1, "publishPolicy": "SOMETIMES"}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "pushBroadcast": 99}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "pushSinglecast": "one"}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "segmentQuery": "os = "}"#, 5013),
                (.POST, "/messaging/chat", #"{"message": 1, "headers": {"google.x": "1"}}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "publishAt": 1}"#, 5030),
                (
                    .POST, "/messaging/chat",
                    #"{"message": 1, "publishAt": 99999999999999, "repeatEvery": 5, "repeatExpiresAt": 1}"#, 5003
                ),
                (.POST, "/messaging/chat", #"{"message": 1, "repeatEvery": 0}"#, 5011),
                (.POST, "/messaging/chat", #"{"message": 1, "publishAt": "soon"}"#, 5011),
                (.DELETE, "/messaging/message:nope", nil, 5040),
                (.POST, "/messaging/chat", "[1, 2", 5011),
                (
                    .POST, "/messaging/chat/subscribe", #"{"selector": "city = 'x'; DROP TABLE messaging.messages"}"#,
                    5013
                ),
                (.POST, "/messaging/chat/subscribe", #"{"selector": "upper(city) = 'X'"}"#, 5013),
                (.POST, "/messaging/chat/subscribe", #"{"selector": "a.b = 1"}"#, 5013),
                (.POST, "/messaging/chat/subscribe", #"{"subtopic": "a..*"}"#, 5012),
            ]
            for (method, path, body, code) in cases {
                let answer = try await cluster.send(method, path, body)
                #expect(
                    answer.json["code"] as? Int == code && (400..<500).contains(answer.status),
                    "\(path) \(body?.prefix(60) ?? ""): \(answer.status) \(answer.text.prefix(200))")
            }
            // A '/' cannot reach a channel name: encoded, it is refused or names no route.
            let slash = try await cluster.send(.POST, "/messaging/a%2Fb", #"{"message": 1}"#)
            #expect(slash.json["code"] as? Int == 5010 || slash.status == 404, "\(slash.status) \(slash.text)")
            let huge = #"{"message": ""# + String(repeating: "x", count: 2 << 20) + #""}"#
            let oversized = try await cluster.send(.POST, "/messaging/chat", huge)
            #expect(oversized.status == 413, "\(oversized.status) \(oversized.text.prefix(200))")
        }
    }

    @Test func scheduledMessagesArriveOnTimeAndCanBeCancelled() async throws {
        try await TestCluster.with { cluster async throws in
            let id = try #require(
                try await cluster.send(.POST, "/messaging/later/subscribe").json["subscriptionId"] as? String)
            let at = Int64(Date().timeIntervalSince1970 * 1000) + 1_500
            let scheduled = try await cluster.send(.POST, "/messaging/later", #"{"message": 1, "publishAt": \#(at)}"#)
            #expect(scheduled.json["status"] as? String == "scheduled", "\(scheduled.text)")
            let messageID = try #require(scheduled.json["messageId"] as? String)
            let doomed = try await cluster.send(.POST, "/messaging/later", #"{"message": 2, "publishAt": \#(at)}"#)
            let doomedID = try #require(doomed.json["messageId"] as? String)
            #expect(try await cluster.send(.GET, "/messaging/\(messageID)").json["status"] as? String == "scheduled")
            let cancelled = try await cluster.send(.DELETE, "/messaging/\(doomedID)")
            #expect(cancelled.json["status"] as? String == "cancelled", "\(cancelled.text)")
            #expect(try await cluster.send(.DELETE, "/messaging/\(doomedID)").json["code"] as? Int == 5040)
            #expect(try await cluster.send(.GET, "/messaging/\(doomedID)").json["status"] as? String == "cancelled")
            let far = try await cluster.send(
                .POST, "/messaging/later", #"{"message": 3, "publishAt": \#(at + 3_600_000)}"#)
            let farID = try #require(far.json["messageId"] as? String)
            var received: [Int] = []
            // The scheduler looks every 250 ms; a generous number of half-second waits.
            for _ in 0..<120 where received.isEmpty {
                try await Task.sleep(for: .milliseconds(500))
                received = try await cluster.poll("later", id)
            }
            #expect(received == [1], "the cancelled message never comes")
            #expect(try await cluster.poll("later", id).isEmpty, "the next one is not due for an hour")
            #expect(try await cluster.send(.GET, "/messaging/\(messageID)").json["status"] as? String == "published")
            #expect(try await cluster.send(.GET, "/messaging/\(farID)").json["status"] as? String == "scheduled")
        }
    }

    /// Two messaging-service processes on one database, one of them killed (SIGKILL) while
    /// occurrences are due and started again: every occurrence of 200 schedules is published
    /// exactly once.
    @Test func twoServiceProcessesFireEachOccurrenceOnceAcrossAKill() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("schedulers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try InternalPKI.initialize(directory: folder.appendingPathComponent("pki").path)
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { database in
                try await MigrationRunner(owner: "messaging", migrations: MessagingService.migrations).apply(
                    on: database, logger: TestDatabase.logger)
                func start(_ name: String) async throws -> ServiceProcess {
                    try await ServiceProcess.start(
                        .messaging, database: configuration, pkiDirectory: folder.appendingPathComponent("pki").path,
                        log: folder.appendingPathComponent("\(name).log"))
                }
                let (one, two) = (try await start("one"), try await start("two"))
                let store = MessageStore(database: database, logger: TestDatabase.logger)
                var expected: [String: Int] = [:]
                for index in 0..<200 {
                    // Times from the moment of each publish: a busy machine may take seconds over the 200.
                    let at = MessageStore.now() + 1_000 + Int64(index % 20) * 100
                    var members: [(String, JSONValue)] = [
                        ("message", .integer(Int64(index))), ("publishAt", .integer(at)),
                    ]
                    if index % 2 == 1 {
                        members += [("repeatEvery", .integer(1)), ("repeatExpiresAt", .integer(at + 2_500))]
                    }
                    let (id, status) = try await store.publish(
                        app: "app", channel: "c", try PublishRequest(.object(JSONObject(members))))
                    #expect(status == "scheduled")
                    expected[id] = index % 2 == 1 ? 3 : 1
                }
                func count(_ sql: PostgresQuery) async throws -> Int64 {
                    try await database.query(sql, logger: TestDatabase.logger).decode(Int64.self).reduce(0, +)
                }
                // Killed once the first occurrences are out and most are still due.
                while try await count("SELECT count(*) FROM messaging.messages") < 20 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                await one.kill()
                let firedBeforeRestart = try await count("SELECT count(*) FROM messaging.messages")
                let restarted = try await start("one-again")
                // Until nothing is scheduled any more: bounded by the suite's time limit.
                while try await count("SELECT count(*) FROM messaging.schedules WHERE status = 'scheduled'") > 0 {
                    try await Task.sleep(for: .milliseconds(100))
                }
                await restarted.stop()
                await two.stop()
                var counted: [String: Int] = [:]
                for try await id in try await database.query(
                    "SELECT id FROM messaging.messages", logger: TestDatabase.logger
                ).decode(String.self) {
                    counted[String(id.split(separator: ":").prefix(2).joined(separator: ":")), default: 0] += 1
                }
                #expect(firedBeforeRestart < 400, "the kill came after everything had fired")
                #expect(
                    counted == expected,
                    "\(counted.values.reduce(0, +)) messages for \(expected.values.reduce(0, +)) occurrences")
            }
        }
    }

    @Test func theSweeperDropsExpiredMessagesAndIdleSubscriptions() async throws {
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { client in
                try await MigrationRunner(owner: "messaging", migrations: MessagingService.migrations).apply(
                    on: client, logger: TestDatabase.logger)
                var store = MessageStore(database: client, logger: TestDatabase.logger)
                let subscription = try await store.subscribe(
                    app: "app", channel: "c", subscriberId: nil, subtopic: nil, selector: nil)
                let message = { (index: Int) in
                    try PublishRequest(.object(JSONObject([("message", .integer(Int64(index)))])))
                }
                for index in 0..<3 { _ = try await store.publish(app: "app", channel: "c", try message(index)) }
                #expect(try await store.sweep() == 0, "nothing is old yet")
                // Each message keeps the retention it was published with.
                var expiring = store
                expiring.retention = -1_000
                for index in 3..<5 { _ = try await expiring.publish(app: "app", channel: "c", try message(index)) }
                #expect(try await store.sweep() == 2)
                #expect(
                    try await store.take(app: "app", channel: "c", id: subscription)?.messages.map(\.data)
                        == (0..<3).map { .integer(Int64($0)) })
                store.idleSubscription = -1_000
                #expect(try await store.sweep() == 1)
                let gone = try await store.take(app: "app", channel: "c", id: subscription)
                #expect(gone.map { _ in true } == nil, "the idle subscription is gone")
            }
        }
    }
}

struct PubSubTestFailure: Error, CustomStringConvertible {
    let description: String
}

extension TestCluster {
    /// One poll's message payloads (integers).
    func poll(_ channel: String, _ subscription: String) async throws -> [Int] {
        let answer = try await send(.GET, "/messaging/\(channel)/\(subscription)")
        guard let messages = answer.json["messages"] as? [[String: Any]] else {
            throw PubSubTestFailure(description: answer.text)
        }
        return messages.compactMap { $0["data"] as? Int }
    }

    /// Polls until a poll answers nothing.
    func pollAll(_ channel: String, _ subscription: String) async throws -> [Int] {
        var all: [Int] = []
        while true {
            let batch = try await poll(channel, subscription)
            if batch.isEmpty { return all }
            all += batch
        }
    }
}

/// Random subtopics over a small alphabet, and the wildcard rules written out plainly.
enum RandomSubtopic {
    static let tokens = ["a", "b", "c"]

    static func topic(_ random: inout SeededGenerator) -> String? {
        guard Int.random(in: 0..<5, using: &random) > 0 else { return nil }
        return (0..<Int.random(in: 1...3, using: &random)).map { _ in tokens.randomElement(using: &random)! }.joined(
            separator: ".")
    }

    static func pattern(_ random: inout SeededGenerator) -> String? {
        guard Int.random(in: 0..<4, using: &random) > 0 else { return nil }
        return (0..<Int.random(in: 1...3, using: &random)).map { _ in (tokens + ["*"]).randomElement(using: &random)! }
            .joined(separator: ".")
    }

    /// `*` last: that token and any after it; `*` elsewhere: exactly one token.
    static func matches(_ pattern: String, _ topic: String?) -> Bool {
        guard let topic else { return false }
        let p = pattern.split(separator: ".").map(String.init)
        let t = topic.split(separator: ".").map(String.init)
        if p.last == "*" {
            guard t.count >= p.count else { return false }
            return zip(p.dropLast(), t).allSatisfy { $0 == "*" || $0 == $1 }
        }
        return p.count == t.count && zip(p, t).allSatisfy { $0 == "*" || $0 == $1 }
    }
}

/// Random selectors over headers `city` (text, sometimes absent) and `n` (a number, sometimes
/// absent), each with its meaning under SQL's three-valued logic computed alongside.
struct RandomSelector {
    let text: String
    /// True, false or nil (unknown) for a message's headers.
    let value: @Sendable (String?, Int?) -> Bool?

    func holds(city: String?, n: Int?) -> Bool { value(city, n) == true }

    static func make(_ random: inout SeededGenerator) -> RandomSelector? {
        guard Int.random(in: 0..<4, using: &random) > 0 else { return nil }
        return expression(&random, depth: 0)
    }

    private static func expression(_ random: inout SeededGenerator, depth: Int) -> RandomSelector {
        switch depth < 2 ? Int.random(in: 0..<8, using: &random) : Int.random(in: 0..<5, using: &random) {
        case 0:
            let city = ["Tokyo", "Paris", "Rome"].randomElement(using: &random)!
            return RandomSelector(text: "city = '\(city)'") { c, _ in c.map { $0 == city } }
        case 1:
            let bound = Int.random(in: 0...9, using: &random)
            return RandomSelector(text: "n > \(bound)") { _, n in n.map { $0 > bound } }
        case 2:
            let low = Int.random(in: 0...5, using: &random)
            return RandomSelector(text: "n BETWEEN \(low) AND \(low + 3)") { _, n in
                n.map { $0 >= low && $0 <= low + 3 }
            }
        case 3:
            return RandomSelector(text: "city IS NULL") { c, _ in c == nil }
        case 4:
            return RandomSelector(text: "city IN ('Tokyo', 'Lima')") { c, _ in c.map { $0 == "Tokyo" || $0 == "Lima" } }
        case 5:
            let (a, b) = (expression(&random, depth: depth + 1), expression(&random, depth: depth + 1))
            return RandomSelector(text: "(\(a.text)) AND (\(b.text))") { c, n in
                let (x, y) = (a.value(c, n), b.value(c, n))
                if x == false || y == false { return false }
                return x == true && y == true ? true : nil
            }
        case 6:
            let (a, b) = (expression(&random, depth: depth + 1), expression(&random, depth: depth + 1))
            return RandomSelector(text: "(\(a.text)) OR (\(b.text))") { c, n in
                let (x, y) = (a.value(c, n), b.value(c, n))
                if x == true || y == true { return true }
                return x == false && y == false ? false : nil
            }
        default:
            let a = expression(&random, depth: depth + 1)
            return RandomSelector(text: "NOT (\(a.text))") { c, n in a.value(c, n).map { !$0 } }
        }
    }
}
