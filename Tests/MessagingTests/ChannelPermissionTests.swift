import Foundation
import InternalProtocol
import NIOHTTP1
import Permissions
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@testable import MessagingService

/// Channels as permission containers (issue 16 item 4): random PUBLISH / SUBSCRIBE cells on
/// channels and the global matrix; every publish, subscribe, poll and cancel is allowed exactly
/// when the nine-layer oracle allows its caller, and a refusal changes nothing.
@Suite(.timeLimit(.minutes(20))) struct ChannelPermissionTests {
    static let channels = ["alpha", "Beta", "gamma"]

    @Test func publishAndSubscribeFollowTheOracle() async throws {
        let seed = SeededGenerator.seed("CHANNEL_TEST_SEED")
        var random = SeededGenerator(seed: seed)
        let draws = (0..<1_000).map { _ in Int.random(in: 0...5, using: &random) }
        try await TestCluster.with { cluster async throws in
            let people = try await PermissionPeople(cluster)
            let principals = people.principals
            let callers = people.callers
            // The server-code key is a caller too (its system role is ServerCodeUser).
            let server = PermissionCaller(
                userID: nil, customRoles: [], systemRoles: ["NotAuthenticatedUser", "ServerCodeUser"])
            // Subscriptions made while everything was allowed, polled after each round's cells.
            var subscriptions: [String: [String]] = [:]
            for channel in Self.channels {
                for (token, _) in callers {
                    let made = try await cluster.send(.POST, "/messaging/\(channel)/subscribe", token: token)
                    subscriptions[channel, default: []].append(
                        try #require(made.json["subscriptionId"] as? String, "\(made.text)"))
                }
            }
            var rules = ContainerPermissions<ChannelOperation>()
            var draw = draws.makeIterator()
            // What each channel was sent (allowed publishes only), and how far each subscription has read.
            var published: [String: [Int]] = [:]
            var read: [String: Int] = [:]
            var subscribes = subscriptions.values.map(\.count).reduce(0, +)
            for round in 0..<5 {
                for container in ["*"] + Self.channels {
                    for (kind, value, principal) in principals where !(container == "*" && kind == "user") {
                        for operation in ChannelOperation.allCases {
                            let choices: [PermissionDecision?] = [nil, nil, nil, .grant, .deny, .deny]
                            let decision = choices[draw.next() ?? 0]
                            try await cluster.setChannelCell(
                                container, #""\#(kind)": "\#(value)""#, operation, decision)
                            if container == "*" {
                                rules.global.set(principal, operation, decision)
                            } else {
                                rules.containers[container.lowercased(), default: PermissionMatrix()].set(
                                    principal, operation, decision)
                            }
                        }
                    }
                }
                for (index, (token, caller)) in callers.enumerated() {
                    for channel in Self.channels {
                        let context = "seed \(seed) round \(round) caller \(index) channel \(channel)"
                        let mayPublish = rules.allows(caller, .publish, container: channel)
                        let maySubscribe = rules.allows(caller, .subscribe, container: channel)
                        let payload = round * 10 + index
                        let publish = try await cluster.send(
                            .POST, "/messaging/\(channel)", #"{"message": \#(payload)}"#, token: token)
                        #expect(
                            mayPublish
                                ? publish.status == 200 : publish.status == 403 && publish.json["code"] as? Int == 5007,
                            "\(context): \(publish.text)")
                        if mayPublish { published[channel, default: []].append(payload) }
                        let subscribed = try await cluster.send(.POST, "/messaging/\(channel)/subscribe", token: token)
                        #expect(
                            maySubscribe
                                ? subscribed.status == 200
                                : subscribed.status == 403 && subscribed.json["code"] as? Int == 5016,
                            "\(context): \(subscribed.text)")
                        if maySubscribe { subscribes += 1 }
                        let subscription = subscriptions[channel]![index]
                        let polled = try await cluster.send(.GET, "/messaging/\(channel)/\(subscription)", token: token)
                        if maySubscribe {
                            // Exactly the allowed publishes since this subscription's last poll: refused ones stored nothing.
                            let sent = published[channel, default: []]
                            let data = (polled.json["messages"] as? [[String: Any]])?.compactMap { $0["data"] as? Int }
                            #expect(
                                data == Array(sent[read[subscription, default: 0]...]), "\(context): \(polled.text)")
                            read[subscription] = sent.count
                        } else {
                            #expect(
                                polled.status == 403 && polled.json["code"] as? Int == 5016,
                                "\(context): \(polled.text)")
                        }
                        let scheduled = try await cluster.send(
                            .POST, "/messaging/\(channel)",
                            #"{"message": 0, "publishAt": \#(Int(Date().timeIntervalSince1970 * 1000) + 3_600_000)}"#,
                            key: .serverCode)
                        guard rules.allows(server, .publish, container: channel) else {
                            #expect(
                                scheduled.status == 403 && scheduled.json["code"] as? Int == 5007,
                                "\(context): \(scheduled.text)")
                            continue
                        }
                        let id = try #require(scheduled.json["messageId"] as? String, "\(context): \(scheduled.text)")
                        let cancelled = try await cluster.send(.DELETE, "/messaging/\(id)", token: token)
                        #expect(
                            mayPublish
                                ? cancelled.status == 200
                                : cancelled.status == 403 && cancelled.json["code"] as? Int == 5007,
                            "\(context): \(cancelled.text)")
                        let status = try await cluster.send(.GET, "/messaging/\(id)").json["status"] as? String
                        #expect(
                            status == (mayPublish ? "cancelled" : "scheduled"),
                            "\(context): a refused cancel changes nothing")
                    }
                }
            }
            let made = try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
                try await client.query("SELECT count(*) FROM messaging.subscriptions", logger: TestDatabase.logger)
                    .decode(Int64.self)
                    .reduce(0) { $0 + $1 }
            }
            #expect(made == Int64(subscribes), "seed \(seed): refused subscribes made nothing")
        }
    }

    @Test func aScheduleEndsWhenItsPublisherLosesPublish() async throws {
        try await TestCluster.with { cluster async throws in
            let bob = try await cluster.account("bob@example.com")
            let ann = try await cluster.account("ann@example.com")
            let subscription = try #require(
                try await cluster.send(.POST, "/messaging/news/subscribe", key: .serverCode).json["subscriptionId"]
                    as? String)
            // Both due in five seconds: time enough to take Bob's right away first, even on a busy machine.
            let due = Int(Date().timeIntervalSince1970 * 1000) + 5_000
            let bobs = try await cluster.send(
                .POST, "/messaging/news", #"{"message": "bob", "publishAt": \#(due), "repeatEvery": 1}"#,
                token: bob.token)
            let anns = try await cluster.send(
                .POST, "/messaging/news", #"{"message": "ann", "publishAt": \#(due)}"#, token: ann.token)
            let bobsID = try #require(bobs.json["messageId"] as? String, "\(bobs.text)")
            let annsID = try #require(anns.json["messageId"] as? String, "\(anns.text)")
            try await cluster.setChannelCell("news", #""user": "\#(bob.id)""#, .publish, .deny)
            var statuses: [String: [String: Any]] = [:]
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                for id in [bobsID, annsID] { statuses[id] = try await cluster.send(.GET, "/messaging/\(id)").json }
                if statuses.values.allSatisfy({ $0["status"] as? String != "scheduled" }) { break }
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(statuses[annsID]?["status"] as? String == "published")
            #expect(statuses[bobsID]?["status"] as? String == "failed")
            #expect(
                (statuses[bobsID]?["errorMessage"] as? String)?.contains("may no longer publish to channel news")
                    == true, "\(statuses)")
            let polled = try await cluster.send(.GET, "/messaging/news/\(subscription)", key: .serverCode)
            #expect(
                (polled.json["messages"] as? [[String: Any]])?.compactMap { $0["data"] as? String } == ["ann"],
                "\(polled.text)")
        }
    }

    /// The second probe's F7: a schedule's id reaches every subscriber with its first
    /// occurrence, and anyone who may publish could cancel it. A user's schedule is that user's,
    /// or the server-code key's, to cancel.
    @Test func onlyItsPublisherOrTheServerCodeKeyCancelsAUsersSchedule() async throws {
        try await TestCluster.shared { cluster async throws in
            let victim = try await cluster.account("victim@example.com")
            let attacker = try await cluster.account("attacker@example.com")
            let later = Int(Date().timeIntervalSince1970 * 1000) + 600_000
            let body = #"{"message": "victim repeating", "publishAt": \#(later), "repeatEvery": 1}"#
            var ids: [String] = []
            for _ in 0..<2 {
                let scheduled = try await cluster.send(.POST, "/messaging/news2", body, token: victim.token)
                ids.append(try #require(scheduled.json["messageId"] as? String, "\(scheduled.text)"))
            }
            let byAttacker = try await cluster.send(.DELETE, "/messaging/\(ids[0])", token: attacker.token)
            #expect(byAttacker.status == 403 && byAttacker.json["code"] as? Int == 5041, "\(byAttacker.text)")
            let anonymous = try await cluster.send(.DELETE, "/messaging/\(ids[0])", key: .js)
            #expect(anonymous.status == 403 && anonymous.json["code"] as? Int == 5041, "\(anonymous.text)")
            #expect(try await cluster.send(.GET, "/messaging/\(ids[0])").json["status"] as? String == "scheduled")

            let byVictim = try await cluster.send(.DELETE, "/messaging/\(ids[0])", token: victim.token)
            #expect(byVictim.status == 200 && byVictim.json["status"] as? String == "cancelled", "\(byVictim.text)")
            let byServer = try await cluster.send(.DELETE, "/messaging/\(ids[1])", key: .serverCode)
            #expect(byServer.status == 200 && byServer.json["status"] as? String == "cancelled", "\(byServer.text)")
        }
    }

    @Test func cellsAreReadBackAndBadRequestsRefused() async throws {
        try await TestCluster.with { cluster async throws in
            try await cluster.setChannelCell("Chat", #""role": "NotAuthenticatedUser""#, .publish, .deny)
            try await cluster.setChannelCell("chat", #""user": "*""#, .subscribe, .grant)
            let listed = try await cluster.send(.GET, "/messaging/channels/CHAT/permissions", key: .serverCode)
            #expect(
                listed.text
                    == #"{"permissions":[{"role":"NotAuthenticatedUser","permission":"PUBLISH","access":"DENY"},{"user":"*","permission":"SUBSCRIBE","access":"GRANT"}],"owner":[]}"#,
                "channels match ignoring case: \(listed.text)")
            #expect(try await cluster.send(.POST, "/messaging/chat", #"{"message": 1}"#).json["code"] as? Int == 5007)
            try await cluster.setChannelCell("chat", #""role": "NotAuthenticatedUser""#, .publish, nil)
            #expect(
                try await cluster.send(.POST, "/messaging/chat", #"{"message": 1}"#).status == 200,
                "INHERIT clears the cell")

            typealias Refusal = (
                method: HTTPMethod, path: String, body: String?, key: APIKeyKind, status: Int, code: Int
            )
            let refused: [Refusal] = [
                (.PUT, "/messaging/channels/chat/permissions/GRANT", #"{"permission": "PUBLISH"}"#, .rest, 403, 4000),
                (.GET, "/messaging/channels/chat/permissions", nil, .rest, 403, 4000),
                (.PUT, "/messaging/channels/chat/permissions/GRANT", #"{"permission": "FLY"}"#, .serverCode, 400, 5011),
                (.PUT, "/messaging/channels/chat/permissions/GRANT", "[]", .serverCode, 400, 5011),
                (.PUT, "/messaging/channels/chat/permissions/GRANT", "{", .serverCode, 400, 5011),
                (
                    .PUT, "/messaging/channels/chat/permissions/MAYBE", #"{"permission": "PUBLISH"}"#, .serverCode, 400,
                    5011
                ),
                (
                    .PUT, "/messaging/channels/*/permissions/DENY", #"{"permission": "PUBLISH", "user": "x"}"#,
                    .serverCode, 400, 5011
                ),
                // A principal that is not one non-empty name would otherwise have meant every role.
                (
                    .PUT, "/messaging/channels/chat/permissions/DENY", #"{"permission": "PUBLISH", "user": 42}"#,
                    .serverCode, 400, 5011
                ),
                (
                    .PUT, "/messaging/channels/chat/permissions/DENY", #"{"permission": "PUBLISH", "user": ""}"#,
                    .serverCode, 400, 5011
                ),
                (
                    .PUT, "/messaging/channels/chat/permissions/DENY", #"{"permission": "PUBLISH", "role": null}"#,
                    .serverCode, 400, 5011
                ),
                (
                    .PUT, "/messaging/channels/chat/permissions/DENY",
                    #"{"permission": "PUBLISH", "user": "u", "role": "r"}"#, .serverCode, 400, 5011
                ),
                (
                    .PUT, "/messaging/channels/a%20b/permissions/DENY", #"{"permission": "PUBLISH"}"#, .serverCode, 400,
                    5010
                ),
                // Channels hold no owned assets: there is no owner policy to set.
                (
                    .PUT, "/messaging/channels/chat/permissions/owner/DENY", #"{"permission": "PUBLISH"}"#, .serverCode,
                    404, 404
                ),
            ]
            for (method, path, body, key, status, code) in refused {
                let answer = try await cluster.send(method, path, body, key: key)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(method) \(path) \(body ?? ""): \(answer.text)")
            }
            let after = try await cluster.send(.GET, "/messaging/channels/chat/permissions", key: .serverCode)
            #expect(
                after.text == #"{"permissions":[{"user":"*","permission":"SUBSCRIBE","access":"GRANT"}],"owner":[]}"#,
                "\(after.text)")
            #expect(
                try await cluster.send(.GET, "/messaging/channels/*/permissions", key: .serverCode).text
                    == #"{"permissions":[],"owner":[]}"#)
        }
    }

    @Test func anAppSetsItsMessageRetention() async throws {
        try await TestCluster.with { cluster async throws in
            #expect(
                try await cluster.send(.GET, "/messaging/settings", key: .serverCode).text
                    == #"{"messageRetention":60}"#)
            let subscription = try #require(
                try await cluster.send(.POST, "/messaging/kept/subscribe").json["subscriptionId"] as? String)
            #expect(try await cluster.send(.POST, "/messaging/kept", #"{"message": "long"}"#).status == 200)
            let set = try await cluster.send(.PUT, "/messaging/settings", #"{"messageRetention": 1}"#, key: .serverCode)
            #expect(set.text == #"{"messageRetention":1}"#, "\(set.text)")
            #expect(try await cluster.send(.POST, "/messaging/kept", #"{"message": "short"}"#).status == 200)
            // The setting applies from the next publish on: past one second only the first is left.
            try await Task.sleep(for: .milliseconds(1_500))
            let polled = try await cluster.send(.GET, "/messaging/kept/\(subscription)")
            #expect(
                (polled.json["messages"] as? [[String: Any]])?.compactMap { $0["data"] as? String } == ["long"],
                "\(polled.text)")

            typealias Refusal = (body: String?, key: APIKeyKind, status: Int, code: Int)
            let refused: [Refusal] = [
                (#"{"messageRetention": 1}"#, .rest, 403, 4000), (#"{"messageRetention": 0}"#, .serverCode, 400, 5011),
                (#"{"messageRetention": 604801}"#, .serverCode, 400, 5011),
                (#"{"messageRetention": 1.5}"#, .serverCode, 400, 5011),
                (#"{"messageRetention": "60"}"#, .serverCode, 400, 5011), (nil, .serverCode, 400, 5011),
            ]
            for (body, key, status, code) in refused {
                let answer = try await cluster.send(.PUT, "/messaging/settings", body, key: key)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(body ?? "no body"): \(answer.text)")
            }
            #expect(try await cluster.send(.GET, "/messaging/settings").json["code"] as? Int == 4000)
            #expect(
                try await cluster.send(.GET, "/messaging/settings", key: .serverCode).text
                    == #"{"messageRetention":1}"#, "refusals changed nothing")
        }
    }
}

extension TestCluster {
    /// Sets (nil: clears) one cell of a channel's permissions.
    func setChannelCell(
        _ channel: String, _ principal: String, _ operation: ChannelOperation, _ decision: PermissionDecision?
    ) async throws {
        let path = "/messaging/channels/\(channel)/permissions/\(decision?.rawValue ?? "INHERIT")"
        let answer = try await send(
            .PUT, path, #"{"permission": "\#(operation.rawValue)", \#(principal)}"#, key: .serverCode)
        guard answer.status == 200 else {
            throw PubSubTestFailure(description: "\(path): \(answer.status) \(answer.text)")
        }
    }
}
