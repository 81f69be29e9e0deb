import DataEngine
import Foundation
import NIOHTTP1
import PostgresNIO
import PostgresSupport
import TestSupport
import Testing

@testable import MessagingService

/// Device registrations (issue 16 item 5): each SDK's body, re-registration, reading back and
/// unregistering, expiry, channel permissions and bad input.
@Suite(.timeLimit(.minutes(20))) struct RegistrationTests {
    static var nowMilliseconds: Int { Int(Date().timeIntervalSince1970 * 1000) }
    static let server = RegistrationStore.Caller(userID: nil, isServer: true)

    @Test func registerReadReRegisterAndUnregister() async throws {
        try await TestCluster.shared { cluster async throws in
            // The JS SDK sends the expiration in seconds, the Swift SDK in milliseconds.
            let inADay = Self.nowMilliseconds + 86_400_000
            let js = try await cluster.send(
                .POST, "/messaging/registrations",
                #"{"deviceToken": "abc123", "deviceId": "js-1", "os": "ANDROID", "osVersion": "14", "channels": ["news", "chat"], "expiration": \#(inADay / 1000)}"#
            )
            let jsID = try #require(js.json["registrationId"] as? String, "\(js.text)")
            let swift = try await cluster.send(
                .POST, "/messaging/registrations",
                #"{"deviceToken": "ff00", "deviceId": "swift-1", "os": "ios", "osVersion": "18.1", "expiration": \#(inADay)}"#
            )
            #expect(swift.json["registrationId"] is String, "\(swift.text)")

            let read = try await cluster.send(.GET, "/messaging/registrations/js-1")
            let items = read.items
            #expect(items.count == 1)
            #expect(items.first?["id"] as? String == jsID && items.first?["deviceToken"] as? String == "abc123")
            #expect(items.first?["os"] as? String == "ANDROID" && items.first?["osVersion"] as? String == "14")
            #expect(items.first?["channels"] as? [String] == ["news", "chat"])
            #expect(items.first?["expiration"] as? Int == inADay / 1000 * 1000)
            let ios = try await cluster.send(.GET, "/messaging/registrations/swift-1").items
            #expect(ios.first?["channels"] as? [String] == ["default"] && ios.first?["os"] as? String == "IOS")
            #expect(ios.first?["expiration"] as? Int == inADay)

            // Registering again replaces what the device registered and keeps its id.
            let again = try await cluster.send(
                .POST, "/messaging/registrations",
                #"{"deviceToken": "new-token", "deviceId": "js-1", "os": "ANDROID", "channels": ["sports"]}"#)
            #expect(again.json["registrationId"] as? String == jsID)
            let replaced = try await cluster.send(.GET, "/messaging/registrations/js-1").items
            #expect(
                replaced.first?["deviceToken"] as? String == "new-token"
                    && replaced.first?["channels"] as? [String] == ["sports"])
            #expect(replaced.first?["expiration"] is NSNull && replaced.first?["osVersion"] is NSNull)

            #expect(try await cluster.send(.DELETE, "/messaging/registrations/js-1").json["result"] as? Bool == true)
            let gone = try await cluster.send(.GET, "/messaging/registrations/js-1")
            #expect(gone.status == 404 && gone.json["code"] as? Int == 5000, "\(gone.text)")
            let goneAgain = try await cluster.send(.DELETE, "/messaging/registrations/js-1")
            #expect(goneAgain.status == 404 && goneAgain.json["code"] as? Int == 5001, "\(goneAgain.text)")
        }
    }

    @Test func aUsersRegistrationIsTheirs() async throws {
        try await TestCluster.shared { cluster async throws in
            let bob = try await cluster.account("bob@example.com")
            let ann = try await cluster.account("ann@example.com")
            let body = #"{"deviceToken": "bobs-token", "deviceId": "bobs-phone", "os": "IOS", "channels": ["news"]}"#
            let made = try await cluster.send(.POST, "/messaging/registrations", body, token: bob.token)
            let id = try #require(made.json["registrationId"] as? String, "\(made.text)")
            // To anyone else the registration does not exist, and it cannot be taken over.
            for token in [nil, ann.token] {
                #expect(
                    try await cluster.send(.GET, "/messaging/registrations/bobs-phone", token: token).json["code"]
                        as? Int == 5000)
                #expect(
                    try await cluster.send(.DELETE, "/messaging/registrations/bobs-phone", token: token).json["code"]
                        as? Int == 5001)
                let hijack = try await cluster.send(
                    .POST, "/messaging/registrations",
                    #"{"deviceToken": "evil", "deviceId": "bobs-phone", "os": "IOS"}"#, token: token)
                #expect(hijack.status == 403 && hijack.json["code"] as? Int == 5018, "\(hijack.text)")
            }
            let read = try await cluster.send(.GET, "/messaging/registrations/bobs-phone", token: bob.token).items
            #expect(
                read.first?["deviceToken"] as? String == "bobs-token" && read.first?["id"] as? String == id, "unchanged"
            )
            // The server-code key acts for every owner and leaves the owner as it is.
            let server = try await cluster.send(
                .POST, "/messaging/registrations", body.replacingOccurrences(of: "news", with: "sports"),
                key: .serverCode)
            #expect(server.json["registrationId"] as? String == id)
            #expect(
                try await cluster.send(.GET, "/messaging/registrations/bobs-phone", key: .serverCode).items.first?[
                    "channels"] as? [String] == ["sports"])
            #expect(
                try await cluster.send(.GET, "/messaging/registrations/bobs-phone").json["code"] as? Int == 5000,
                "still Bob's")
            // A device registered before its user logged in becomes theirs when they register it.
            _ = try await cluster.send(
                .POST, "/messaging/registrations", #"{"deviceToken": "t", "deviceId": "shared", "os": "ANDROID"}"#)
            #expect(
                try await cluster.send(
                    .POST, "/messaging/registrations", #"{"deviceToken": "t2", "deviceId": "shared", "os": "ANDROID"}"#,
                    token: ann.token
                ).status == 200)
            #expect(try await cluster.send(.GET, "/messaging/registrations/shared").json["code"] as? Int == 5000)
            #expect(
                try await cluster.send(.DELETE, "/messaging/registrations/shared", token: ann.token).json["result"]
                    as? Bool == true)
            #expect(
                try await cluster.send(.DELETE, "/messaging/registrations/bobs-phone", token: bob.token).json["result"]
                    as? Bool == true)
        }
    }

    @Test func badRegistrationsAreRefusedAndChangeNothing() async throws {
        try await TestCluster.shared { cluster async throws in
            let manyChannels = (0...DeviceRegistration.maximumChannels).map { "\"c\($0)\"" }.joined(separator: ",")
            let refused: [(String?, Int)] = [
                (nil, 5011), ("[]", 5011), ("{", 5011),
                (#"{"deviceId": "d", "os": "IOS"}"#, 5011),
                (#"{"deviceToken": "t", "os": "IOS"}"#, 5011),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "BEOS"}"#, 5011),
                (#"{"deviceToken": 5, "deviceId": "d", "os": "IOS"}"#, 5011),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "channels": "news"}"#, 5011),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "channels": [1]}"#, 5011),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "channels": [\#(manyChannels)]}"#, 5011),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "channels": ["a/b"]}"#, 5010),
                (
                    #"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "expiration": \#(Self.nowMilliseconds - 60_000)}"#,
                    5004
                ),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "expiration": 1000}"#, 5004),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "expiration": -9223372036854776}"#, 5004),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "expiration": 0}"#, 5004),
                (#"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "expiration": "tomorrow"}"#, 5011),
                (#"{"deviceToken": "\#(String(repeating: "f", count: 5_000))", "deviceId": "d", "os": "IOS"}"#, 8000),
                // An id the primary key's index could not hold answered 500 (second probe, F10).
                (
                    #"{"deviceToken": "t", "deviceId": "\#(String((0..<2_800).map { _ in "abcdefghij0123456789".randomElement()! }))", "os": "IOS"}"#,
                    8000
                ),
            ]
            for (body, code) in refused {
                let answer = try await cluster.send(.POST, "/messaging/registrations", body)
                #expect(
                    answer.status == 400 && answer.json["code"] as? Int == code,
                    "\(body?.prefix(80) ?? "no body"): \(answer.text)")
            }
            #expect(
                try await cluster.send(.GET, "/messaging/registrations/d").json["code"] as? Int == 5000,
                "nothing was registered")

            // Registering on a channel needs SUBSCRIBE on it.
            try await cluster.setChannelCell("private", #""role": "NotAuthenticatedUser""#, .subscribe, .deny)
            let denied = try await cluster.send(
                .POST, "/messaging/registrations",
                #"{"deviceToken": "t", "deviceId": "d", "os": "IOS", "channels": ["news", "private"]}"#)
            #expect(denied.status == 403 && denied.json["code"] as? Int == 5016, "\(denied.text)")
            #expect(try await cluster.send(.GET, "/messaging/registrations/d").json["code"] as? Int == 5000)
        }
    }

    @Test func expiredRegistrationsAreHiddenThenSwept() async throws {
        try await TestDatabase.with { configuration in
            try await PostgresClient.with(configuration, logger: TestDatabase.logger) { client in
                try await MigrationRunner(owner: "messaging", migrations: MessagingService.migrations).apply(
                    on: client, logger: TestDatabase.logger)
                let store = RegistrationStore(database: client, logger: TestDatabase.logger)
                let now = Int64(Self.nowMilliseconds)
                for (device, expiration) in [("lasting", nil), ("ending", now + 1_000)] as [(String, Int64?)] {
                    let body = JSONValue.object(
                        JSONObject([
                            ("deviceToken", .string("t-\(device)")), ("deviceId", .string(device)),
                            ("os", .string("IOS")),
                            ("expiration", expiration.map(JSONValue.integer) ?? .null),
                        ]))
                    _ = try await store.register(
                        app: "app", try DeviceRegistration(body, now: now), by: Self.server, now: now)
                }
                #expect(try await store.registration(app: "app", deviceId: "ending", for: Self.server, now: now) != nil)
                #expect(try await store.sweep(now: now) == 0)
                // Read as of a later instant, the ended registration is gone for every purpose.
                let later = now + 2_000
                #expect(
                    try await store.registration(app: "app", deviceId: "ending", for: Self.server, now: later) == nil)
                #expect(
                    try await store.unregister(app: "app", deviceId: "ending", by: Self.server, now: later) == false)
                #expect(
                    try await store.sweep(now: later) == 0,
                    "unregistering an ended registration removed it, answering false")
                _ = try await store.register(
                    app: "app",
                    DeviceRegistration(
                        deviceToken: "t", deviceId: "ending", os: .android, osVersion: nil, channels: ["c"],
                        expiration: now + 1_000),
                    by: Self.server, now: now)
                #expect(try await store.sweep(now: later) == 1)
                #expect(
                    try await store.registration(app: "app", deviceId: "lasting", for: Self.server, now: later)?
                        .deviceToken == "t-lasting")
            }
        }
    }
}
