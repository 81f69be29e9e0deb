import DataEngine
import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

@testable import MessagingService

/// Push delivery end to end (issue 16 item 6): a publish through the gateway reaches the devices
/// registered on its channel through the APNs and FCM stand-ins, payloads as the mapping says,
/// targets narrowed by broadcast, singlecast and segment, providers' refusals removing devices,
/// and throttling and outages retried from the durable queue.
@Suite(.timeLimit(.minutes(20))) struct PushDeliveryTests {
    static func iosToken(_ index: Int, fault: String = "") -> String { APNsClientTests.token(index, fault: fault) }

    @Test func aPublishReachesEveryRegisteredDeviceFieldByField() async throws {
        try await PushCluster.with { push in
            let cluster = push.cluster
            try await push.register("iphone", os: "IOS", token: Self.iosToken(1), channels: ["news"], version: "17")
            try await push.register("pixel", os: "ANDROID", token: "fcm-token-1", channels: ["news"], version: "14")
            try await push.register("ipad", os: "IOS", token: Self.iosToken(2), channels: ["sports"])
            let subscription = try #require(
                try await cluster.send(.POST, "/messaging/news/subscribe").json["subscriptionId"] as? String)
            let headers =
                #"{"ios-alert-title": "Title", "ios-badge": "3", "ios-sound": "default", "android-content-title": "Android", "city": "Tokyo", "wp-toast": "x"}"#
            let published = try await cluster.send(
                .POST, "/messaging/news", #"{"message": "Hello", "headers": \#(headers)}"#)
            let id = try #require(published.json["messageId"] as? String, "\(published.text)")
            let status = try await push.settled(id)
            #expect(status["delivered"] as? Int == 2 && status["failed"] as? Int == 0, "\(status)")

            let apns = try push.apns.records()
            #expect(apns.count == 1 && apns.first?["token"] as? String == Self.iosToken(1))
            let payload = try #require(apns.first?["payload"] as? [String: Any])
            let aps = try #require(payload["aps"] as? [String: Any])
            #expect(aps["alert"] as? [String: String] == ["body": "Hello", "title": "Title"])
            #expect(
                aps["badge"] as? Int == 3 && aps["sound"] as? String == "default" && aps["mutable-content"] as? Int == 1
            )
            #expect(
                payload["message"] as? String == "Hello" && payload["messageId"] as? String == id
                    && payload["city"] as? String == "Tokyo")
            #expect(payload["wp-toast"] == nil && payload["ios-alert-title"] as? String == "Title")
            #expect((apns.first?["headers"] as? [String: Any])?["apns-push-type"] as? String == "alert")

            let fcm = try push.fcm.sends()
            let message = try #require(fcm.first?["message"] as? [String: Any])
            #expect(fcm.count == 1 && message["token"] as? String == "fcm-token-1")
            #expect(
                message["data"] as? [String: String] == [
                    "message": "Hello", "messageId": id, "ios-alert-title": "Title", "ios-badge": "3",
                    "ios-sound": "default",
                    "android-content-title": "Android", "city": "Tokyo",
                ])
            #expect(
                message["android"] as? [String: String] == ["priority": "HIGH", "ttl": "86400s"]
                    && message["notification"] == nil)
            // BOTH (the default): the subscribers got it too.
            let polled = try await cluster.send(.GET, "/messaging/news/\(subscription)")
            #expect(
                (polled.json["messages"] as? [[String: Any]])?.first?["data"] as? String == "Hello", "\(polled.text)")
        }
    }

    @Test func broadcastSinglecastSegmentAndPolicySelectTheDevices() async throws {
        try await PushCluster.with { push in
            let cluster = push.cluster
            try await push.register("ios-17", os: "IOS", token: Self.iosToken(1), channels: ["news"], version: "17")
            try await push.register("ios-16", os: "IOS", token: Self.iosToken(2), channels: ["news"], version: "16")
            try await push.register("android-14", os: "ANDROID", token: "fcm-a", channels: ["news"], version: "14")
            try await push.register(
                "elsewhere", os: "IOS", token: Self.iosToken(3), channels: ["sports"], version: "17")
            try await push.register(
                "ending", os: "ANDROID", token: "fcm-ending", channels: ["news"], version: "14",
                expiration: Int(Date().timeIntervalSince1970 * 1000) + 1_000)
            try await Task.sleep(for: .milliseconds(1_500))
            let subscription = try #require(
                try await cluster.send(.POST, "/messaging/news/subscribe").json["subscriptionId"] as? String)
            let cases: [(options: String, ios: Set<String>, android: Set<String>)] = [
                (#""publishPolicy": "PUSH""#, [Self.iosToken(1), Self.iosToken(2)], ["fcm-a"]),
                (#""pushBroadcast": "FOR_ANDROID""#, [], ["fcm-a"]),
                (#""pushBroadcast": 1"#, [Self.iosToken(1), Self.iosToken(2)], []),
                (#""pushSinglecast": ["elsewhere", "android-14", "nobody"]"#, [Self.iosToken(3)], ["fcm-a"]),
                (#""segmentQuery": "os = 'IOS' AND osVersion >= 17""#, [Self.iosToken(1)], []),
                (#""publishPolicy": 2, "segmentQuery": "deviceId LIKE 'android%'""#, [], ["fcm-a"]),
            ]
            for (index, (options, ios, android)) in cases.enumerated() {
                let (apnsBefore, fcmBefore) = (try push.apns.records().count, try push.fcm.sends().count)
                let published = try await cluster.send(
                    .POST, "/messaging/news", #"{"message": \#(index), \#(options)}"#)
                let id = try #require(published.json["messageId"] as? String, "\(options): \(published.text)")
                let status = try await push.settled(id)
                #expect(status["delivered"] as? Int == ios.count + android.count, "\(options): \(status)")
                let apnsTokens = Set(
                    try push.apns.records().dropFirst(apnsBefore).compactMap { $0["token"] as? String })
                let fcmTokens = Set(
                    try push.fcm.sends().dropFirst(fcmBefore).compactMap {
                        ($0["message"] as? [String: Any])?["token"] as? String
                    })
                #expect(apnsTokens == ios && fcmTokens == android, "\(options)")
            }
            // PUBSUB pushes nothing; PUSH reached no subscriber (only the five others did).
            let quiet = try await cluster.send(
                .POST, "/messaging/news", #"{"message": "quiet", "publishPolicy": "PUBSUB"}"#)
            let quietID = try #require(quiet.json["messageId"] as? String)
            #expect(try await cluster.send(.GET, "/messaging/\(quietID)").json["pushStatus"] == nil)
            // A channel no device is registered on queues no push job at all.
            let unheard = try await cluster.send(.POST, "/messaging/empty", #"{"message": "unheard"}"#)
            let unheardID = try #require(unheard.json["messageId"] as? String)
            let unheardStatus = try await cluster.send(.GET, "/messaging/\(unheardID)").json
            #expect(
                unheardStatus["status"] as? String == "published" && unheardStatus["pushStatus"] == nil,
                "\(unheardStatus)")
            #expect(try await cluster.poll("news", subscription) == [1, 2, 3, 4, 5])
        }
    }

    @Test func refusalsRemoveDevicesAndOutagesAreRetried() async throws {
        try await PushCluster.with { push in
            let cluster = push.cluster
            try await push.register("gone-ios", os: "IOS", token: Self.iosToken(1, fault: "0410"), channels: ["news"])
            try await push.register("bad-ios", os: "IOS", token: Self.iosToken(2, fault: "0400"), channels: ["news"])
            try await push.register("busy-ios", os: "IOS", token: Self.iosToken(3, fault: "0503"), channels: ["news"])
            try await push.register("gone-android", os: "ANDROID", token: "a-unregistered", channels: ["news"])
            try await push.register("throttled-android", os: "ANDROID", token: "b-quota", channels: ["news"])
            try await push.register("phone", os: "WP", token: "wp-token", channels: ["news"])
            let published = try await cluster.send(
                .POST, "/messaging/news", #"{"message": "hi", "publishPolicy": "PUSH"}"#)
            let id = try #require(published.json["messageId"] as? String)
            let status = try await push.settled(id)
            #expect(status["delivered"] as? Int == 2 && status["failed"] as? Int == 4, "\(status)")
            let failures = Set((status["failures"] as? [String]) ?? [])
            #expect(failures.isSuperset(of: ["Unregistered", "BadDeviceToken", "UNREGISTERED"]), "\(failures)")
            for device in ["gone-ios", "bad-ios", "gone-android"] {
                #expect(
                    try await cluster.send(.GET, "/messaging/registrations/\(device)").json["code"] as? Int == 5000,
                    "\(device) removed")
            }
            for device in ["busy-ios", "throttled-android", "phone"] {
                #expect(
                    try await cluster.send(.GET, "/messaging/registrations/\(device)").status == 200, "\(device) kept")
            }
            // Unavailable twice, then delivered on the third attempt; throttled twice (retry-after 1 s), then delivered.
            #expect(
                try push.apns.records().filter { $0["token"] as? String == Self.iosToken(3, fault: "0503") }.map {
                    $0["status"] as? Int
                } == [503, 503, 200])
            #expect(
                try push.fcm.sends().filter { ($0["message"] as? [String: Any])?["token"] as? String == "b-quota" }.map
                { $0["status"] as? Int } == [429, 429, 200])
        }
    }

    @Test func pushTemplatesPublishTheirFilledContent() async throws {
        try await PushCluster.with { push in
            let cluster = push.cluster
            try await push.register("iphone", os: "IOS", token: Self.iosToken(1), channels: ["news"])
            try await push.register("pixel", os: "ANDROID", token: "fcm-1", channels: ["news"])
            let greeting = #"""
                {"channel": "news", "message": "Hi {name}", "headers": {"ios-alert-title": "Welcome {name}", "android-content-title": "Welcome {name}"}, "pushBroadcast": "FOR_IOS|FOR_ANDROID"}
                """#
            #expect(
                try await cluster.send(.PUT, "/messaging/pushtemplates/greeting", greeting, key: .serverCode).status
                    == 200)
            let androidOnly = #"{"channel": "news", "message": "Android", "pushBroadcast": "FOR_ANDROID"}"#
            #expect(
                try await cluster.send(.PUT, "/messaging/pushtemplates/androidOnly", androidOnly, key: .serverCode)
                    .status == 200)
            let all = try await cluster.send(.GET, "/messaging/pushtemplates")
            #expect(Set(all.json.keys) == ["greeting", "androidOnly"], "\(all.text)")
            #expect(Set(try await cluster.send(.GET, "/messaging/pushtemplates/IOS").json.keys) == ["greeting"])
            #expect(
                Set(try await cluster.send(.GET, "/messaging/pushtemplates/android").json.keys) == [
                    "greeting", "androidOnly",
                ])

            let sent = try await cluster.send(
                .POST, "/messaging/push/greeting", #"{"templateValues": {"name": "Ann"}}"#)
            let id = try #require(sent.json["messageId"] as? String, "\(sent.text)")
            #expect(try await push.settled(id)["delivered"] as? Int == 2)
            let payload = try #require(try push.apns.records().first?["payload"] as? [String: Any])
            #expect(
                (payload["aps"] as? [String: Any])?["alert"] as? [String: String] == [
                    "title": "Welcome Ann", "body": "Hi Ann",
                ])
            #expect(payload["template_name"] as? String == "greeting")
            let data = try #require(
                (try push.fcm.sends().first?["message"] as? [String: Any])?["data"] as? [String: String])
            #expect(
                data["message"] == "Hi Ann" && data["android-content-title"] == "Welcome Ann"
                    && data["template_name"] == "greeting")

            try await cluster.setChannelCell("news", #""role": "NotAuthenticatedUser""#, .publish, .deny)
            typealias Refusal = (
                method: HTTPMethod, path: String, body: String?, key: APIKeyKind, status: Int, code: Int
            )
            let refused: [Refusal] = [
                (.POST, "/messaging/push/greeting", nil, .rest, 403, 5007),
                (.POST, "/messaging/push/nope", nil, .serverCode, 404, 5019),
                (.POST, "/messaging/push/greeting", #"{"templateValues": {"x": [1]}}"#, .serverCode, 400, 5011),
                (.PUT, "/messaging/pushtemplates/t", greeting, .rest, 403, 4000),
                (.PUT, "/messaging/pushtemplates/t", #"{"channel": "a b"}"#, .serverCode, 400, 5010),
                (.PUT, "/messaging/pushtemplates/t", #"{"unknown": 1}"#, .serverCode, 400, 5011),
                (.PUT, "/messaging/pushtemplates/t", #"{"headers": {"google.x": "1"}}"#, .serverCode, 400, 5011),
                (.PUT, "/messaging/pushtemplates/t", #"{"segmentQuery": "os ="}"#, .serverCode, 400, 5013),
                (.GET, "/messaging/pushtemplates/BEOS", nil, .rest, 400, 5011),
                (.DELETE, "/messaging/pushtemplates/nope", nil, .serverCode, 404, 5019),
            ]
            for (method, path, body, key, status, code) in refused {
                let answer = try await cluster.send(method, path, body, key: key)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(method) \(path) \(body ?? ""): \(answer.text)")
            }
            #expect(
                try await cluster.send(.DELETE, "/messaging/pushtemplates/androidOnly", key: .serverCode).json["result"]
                    as? Bool == true)
            #expect(Set(try await cluster.send(.GET, "/messaging/pushtemplates").json.keys) == ["greeting"])
        }
    }

    @Test func anAppWithoutCredentialsFailsItsPushesAndSaysWhy() async throws {
        try await PushCluster.with(credentials: false) { push in
            try await push.register("iphone", os: "IOS", token: Self.iosToken(1), channels: ["news"])
            let published = try await push.cluster.send(.POST, "/messaging/news", #"{"message": "hi"}"#)
            let status = try await push.settled(try #require(published.json["messageId"] as? String))
            #expect(
                status["failed"] as? Int == 1 && status["failures"] as? [String] == ["No APNs credential is set"],
                "\(status)")
            #expect(try push.apns.records().isEmpty)
        }
    }
}

/// A cluster whose messaging-service pushes to the two stand-ins, with the app's credentials set.
struct PushCluster: Sendable {
    let cluster: TestCluster
    let apns: APNsStandIn
    let fcm: FCMStandIn

    static func with(credentials: Bool = true, _ body: @Sendable (PushCluster) async throws -> Void) async throws {
        try await APNsStandIn.run { apns in
            try await FCMStandIn.run { fcm in
                let environment = [
                    "BAAS_SECRETS_KEY": PushCredentialTests.secretsKey,
                    "BAAS_PUSH_APNS_URL": "https://127.0.0.1:\(apns.port)",
                    "BAAS_PUSH_FCM_URL": "https://127.0.0.1:\(fcm.port)", "BAAS_PUSH_CA_FILE": apns.caFile,
                    "BAAS_PUSH_RETRY_BASE_MS": "50", "BAAS_PUSH_RETRY_CAP_MS": "200",
                ]
                try await TestCluster.with(environment: environment) { cluster async throws in
                    if credentials {
                        let pem = { (text: String) in text.replacingOccurrences(of: "\n", with: "\\n") }
                        let ios =
                            #"{"keyId": "ABCDE12345", "teamId": "TEAM123456", "bundleId": "com.example.app", "privateKey": "\#(pem(apns.credential.pem))"}"#
                        #expect(
                            try await cluster.send(.PUT, "/messaging/push/credentials/apns", ios, key: .serverCode)
                                .status == 200)
                        let account = JSONValue.object(
                            fcm.account.summary.merging([
                                ("private_key", .string(fcm.account.pem)), ("type", .string("service_account")),
                            ]))
                        #expect(
                            try await cluster.send(
                                .PUT, "/messaging/push/credentials/fcm", account.jsonText, key: .serverCode
                            ).status == 200)
                    }
                    try await body(PushCluster(cluster: cluster, apns: apns, fcm: fcm))
                }
            }
        }
    }

    /// Registers a device anonymously.
    func register(
        _ device: String, os: String, token: String, channels: [String], version: String? = nil, expiration: Int? = nil
    ) async throws {
        var body =
            #"{"deviceId": "\#(device)", "os": "\#(os)", "deviceToken": "\#(token)", "channels": [\#(channels.map { "\"\($0)\"" }.joined(separator: ","))]"#
        if let version { body += #", "osVersion": "\#(version)""# }
        if let expiration { body += #", "expiration": \#(expiration)"# }
        let answer = try await cluster.send(.POST, "/messaging/registrations", body + "}")
        guard answer.status == 200 else {
            throw PubSubTestFailure(description: "registering \(device): \(answer.text)")
        }
    }

    /// The message's push status once its targets are resolved and nothing is pending (within a minute).
    func settled(_ id: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let answer = try await cluster.send(.GET, "/messaging/\(id)")
            if let status = answer.json["pushStatus"] as? [String: Any], status["resolved"] as? Bool == true,
                status["pending"] as? Int == 0
            {
                return status
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw PubSubTestFailure(description: "the push of \(id) did not settle within a minute")
    }
}

extension JSONObject {
    /// The object with `members` set.
    func merging(_ members: [(String, JSONValue)]) -> JSONObject {
        var object = self
        for (name, value) in members { object[name] = value }
        return object
    }
}
