import AsyncHTTPClient
import Crypto
import DataEngine
import Foundation
import TestSupport
import Testing

@testable import MessagingService

/// The APNs client against a stand-in that speaks HTTP/2 over TLS and checks the provider token
/// with the configured public key (Tests/Peers/apns-standin.py): payloads and headers as sent,
/// one token for many requests, and each of Apple's answers classified.
@Suite(.timeLimit(.minutes(20))) struct APNsClientTests {
    static func token(_ index: Int, fault: String = "") -> String {
        let hex = String(format: "%064x", index)
        return fault.isEmpty ? hex : String(hex.dropLast(fault.count)) + fault
    }

    static func notification(_ token: String, background: Bool = false, payload: JSONObject? = nil) -> APNsNotification
    {
        APNsNotification(
            deviceToken: token,
            payload: payload
                ?? JSONObject([
                    ("aps", .object(JSONObject([("alert", .object(JSONObject([("body", .string("hi"))])))]))),
                    ("messageId", .string("m1")),
                ]),
            background: background, expiration: Int64(Date().timeIntervalSince1970) + 86_400,
            id: UUID().uuidString.lowercased())
    }

    @Test func notificationsReachTheStandInWithOneProviderToken() async throws {
        try await APNsStandIn.with { standIn, client, credential in
            // 200 at once: the stand-in allows one stream until a token verifies, then 1,000.
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for index in 0..<200 {
                    group.addTask { await client.send(Self.notification(Self.token(index)), with: credential) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(
                outcomes.allSatisfy { if case .delivered = $0 { true } else { false } },
                "\(outcomes.filter { $0.deliveredID == nil })")
            #expect(try standIn.connections() == 1, "one HTTP/2 connection carries them all")
            let silent = await client.send(
                Self.notification(
                    Self.token(999), background: true,
                    payload: JSONObject([("aps", .object(JSONObject([("content-available", .integer(1))])))])),
                with: credential)
            #expect(silent == .delivered(silent.deliveredID ?? "-"))
            let records = try standIn.records()
            #expect(
                records.count == 201 && records.allSatisfy { $0["status"] as? Int == 200 },
                "\(records.filter { $0["status"] as? Int != 200 })")
            #expect(
                Set(records.compactMap { $0["authorization"] as? String }).count == 1,
                "one provider token for every request")
            let first = try #require(records.first { $0["token"] as? String == Self.token(0) })
            let headers = try #require(first["headers"] as? [String: Any])
            #expect(
                headers["apns-topic"] as? String == "com.example.app" && headers["apns-push-type"] as? String == "alert"
            )
            #expect(headers["apns-priority"] as? String == "10" && (headers["apns-id"] as? String)?.count == 36)
            #expect(
                ((first["payload"] as? [String: Any])?["aps"] as? [String: Any])?["alert"] as? [String: String] == [
                    "body": "hi"
                ])
            let background = try #require(
                records.first { $0["token"] as? String == Self.token(999) }?["headers"] as? [String: Any])
            #expect(
                background["apns-push-type"] as? String == "background" && background["apns-priority"] as? String == "5"
            )
        }
    }

    @Test func applesAnswersAreClassified() async throws {
        try await APNsStandIn.with { standIn, client, credential in
            let gone = await client.send(Self.notification(Self.token(1, fault: "0410")), with: credential)
            guard case .unregistered("Unregistered", let since?) = gone else {
                Issue.record("\(gone)")
                return
            }
            #expect(abs(since - Int64(Date().timeIntervalSince1970 * 1000)) < 600_000, "the timestamp is in ms")
            #expect(
                await client.send(Self.notification(Self.token(2, fault: "0400")), with: credential)
                    == .unregistered("BadDeviceToken", since: nil))
            #expect(
                await client.send(Self.notification(Self.token(3, fault: "0429")), with: credential)
                    == .retry("TooManyRequests", after: nil))
            // Unavailable twice, then accepted: the retries are the queue's; each answer is classified.
            let busy = Self.notification(Self.token(4, fault: "0503"))
            #expect(await client.send(busy, with: credential) == .retry("ServiceUnavailable", after: nil))
            #expect(await client.send(busy, with: credential) == .retry("ServiceUnavailable", after: nil))
            #expect(await client.send(busy, with: credential).deliveredID != nil)
            // Too large is refused before anything is sent.
            let big = JSONObject([
                ("aps", .object(JSONObject([("alert", .string(String(repeating: "x", count: 4_100)))])))
            ])
            #expect(
                await client.send(Self.notification(Self.token(5), payload: big), with: credential)
                    == .rejected("PayloadTooLarge"))
            #expect(try standIn.records().count == 6)
            // A key APNs does not know (another key under the same ids) is a credential problem.
            let stranger = try APNsCredential(
                .object(
                    JSONObject([
                        ("keyId", .string(credential.keyId)), ("teamId", .string(credential.teamId)),
                        ("bundleId", .string(credential.bundleId)),
                        ("privateKey", .string(P256.Signing.PrivateKey().pemRepresentation)),
                    ])))
            let refused = await APNsClient(http: client.http, settings: client.settings, tokens: APNsTokens()).send(
                Self.notification(Self.token(6)), with: stranger)
            #expect(refused == .misconfigured("InvalidProviderToken"))
        }
    }

    @Test func tokensAreReusedForFiftyMinutesAndMintedInWholeSeconds() async throws {
        let clock = TestClock(Date(timeIntervalSince1970: 1_800_000_000.75))
        let tokens = APNsTokens(now: { clock.now })
        let credential = try APNsCredential(
            .object(
                JSONObject([
                    ("keyId", .string("ABCDE12345")), ("teamId", .string("TEAM123456")), ("bundleId", .string("b")),
                    ("privateKey", .string(P256.Signing.PrivateKey().pemRepresentation)),
                ])))
        let first = try await tokens.token(for: credential)
        let claims = try #require(first.split(separator: ".").dropFirst().first)
        var base64 = claims.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        #expect(
            String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
                == #"{"iss":"TEAM123456","iat":1800000000}"#)
        clock.advance(49 * 60)
        #expect(try await tokens.token(for: credential) == first)
        #expect(await tokens.expire(first, for: credential) == true)
        let second = try await tokens.token(for: credential)
        #expect(second != first)
        clock.advance(60)
        #expect(await tokens.expire(second, for: credential) == false, "a token under 20 minutes old is kept")
        clock.advance(50 * 60)
        #expect(try await tokens.token(for: credential) != second)
    }
}

/// A clock the test moves.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var instant: Date

    init(_ instant: Date) { self.instant = instant }

    var now: Date { lock.withLock { instant } }

    func advance(_ seconds: TimeInterval) { lock.withLock { instant += seconds } }
}

extension PushOutcome {
    /// The provider's id when delivered.
    var deliveredID: String? {
        if case .delivered(let id) = self { id } else { nil }
    }
}

/// Tests/Peers/apns-standin.py with a fresh key on a free port.
struct APNsStandIn: Sendable {
    let folder: URL
    let port: Int
    /// The test CA that issued its certificate.
    let caFile: String
    /// A credential whose key it verifies tokens with.
    let credential: APNsCredential

    /// How many HTTP/2 connections it has accepted.
    func connections() throws -> Int {
        Int((try? String(contentsOf: folder.appendingPathComponent("connections"), encoding: .utf8)) ?? "0") ?? 0
    }

    /// The requests it answered, oldest first.
    func records() throws -> [[String: Any]] {
        let text = (try? String(contentsOf: folder.appendingPathComponent("apns.jsonl"), encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
    }

    /// Runs the stand-in while `body` runs.
    static func run(_ body: @Sendable (APNsStandIn) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apns-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = P256.Signing.PrivateKey()
        try key.publicKey.pemRepresentation.write(
            to: folder.appendingPathComponent("public.pem"), atomically: true, encoding: .utf8)
        let credential = try APNsCredential(
            .object(
                JSONObject([
                    ("keyId", .string("ABCDE12345")), ("teamId", .string("TEAM123456")),
                    ("bundleId", .string("com.example.app")),
                    ("privateKey", .string(key.pemRepresentation)),
                ])))
        let port = try await FreePort.next()
        let (tls, caFile) = try PeerProcess.writeTLSFiles(into: folder, commonName: "apns-standin")
        let arguments =
            tls + [
                "--port", "\(port)", "--key-id", "ABCDE12345", "--team-id", "TEAM123456", "--topic", "com.example.app",
                "--public-key", folder.appendingPathComponent("public.pem").path, "--out", folder.path,
            ]
        try await PeerProcess.run(
            script: "Tests/Peers/apns-standin.py", arguments: arguments, folder: folder,
            hint: "pip install h2 pyjwt cryptography"
        ) {
            try await body(APNsStandIn(folder: folder, port: port, caFile: caFile, credential: credential))
        }
    }

    /// Runs the stand-in and a client that trusts it while `body` runs.
    static func with(_ body: @Sendable (APNsStandIn, APNsClient, APNsCredential) async throws -> Void) async throws {
        try await run { standIn in
            let settings = PushSettings(apnsURL: "https://127.0.0.1:\(standIn.port)", caFile: standIn.caFile)
            let http = try settings.httpClient()
            do {
                try await body(
                    standIn, APNsClient(http: http, settings: settings, tokens: APNsTokens()), standIn.credential)
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
