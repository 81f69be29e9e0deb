import AsyncHTTPClient
import DataEngine
import Foundation
import TestSupport
import Testing
import _CryptoExtras

@testable import MessagingService

/// The FCM client against a stand-in of Google's token endpoint and `messages:send` that
/// verifies the service account's RS256 assertion (Tests/Peers/fcm-standin.py): data-only
/// messages as sent, one token for many sends, a refresh on 401, and each answer classified.
@Suite(.timeLimit(.minutes(20))) struct FCMClientTests {
    static func message(_ token: String) -> FCMMessage {
        FCMMessage(
            token: token, data: [("message", "hello"), ("android-content-title", "Title"), ("messageId", "m1")],
            timeToLive: 86_400)
    }

    @Test func messagesReachTheStandInWithOneAccessToken() async throws {
        try await FCMStandIn.with { standIn, client, http, account in
            let outcomes = await withTaskGroup(of: PushOutcome.self) { group in
                for index in 0..<20 {
                    group.addTask { await client.send(Self.message("device-\(index)"), with: account) }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(
                outcomes.allSatisfy { $0.deliveredID?.hasPrefix("projects/demo-project/messages/") == true },
                "\(outcomes)")
            #expect(try standIn.tokensIssued() == 1, "one access token for every send")
            let sends = try standIn.sends()
            #expect(sends.count == 20 && sends.allSatisfy { $0["status"] as? Int == 200 })
            let first = try #require(
                sends.first { ($0["message"] as? [String: Any])?["token"] as? String == "device-0" }?["message"]
                    as? [String: Any])
            #expect(
                first["data"] as? [String: String] == [
                    "message": "hello", "android-content-title": "Title", "messageId": "m1",
                ])
            #expect(
                first["android"] as? [String: String] == ["priority": "HIGH", "ttl": "86400s"]
                    && first["notification"] == nil)

            // An access token FCM no longer takes is fetched again once.
            try await standIn.expireTokens(with: http)
            #expect(await client.send(Self.message("device-after"), with: account).deliveredID != nil)
            #expect(try standIn.tokensIssued() == 2)
        }
    }

    @Test func googlesAnswersAreClassified() async throws {
        try await FCMStandIn.with { standIn, client, http, account in
            #expect(
                await client.send(Self.message("a-unregistered"), with: account)
                    == .unregistered("UNREGISTERED", since: nil))
            #expect(
                await client.send(Self.message("b-quota"), with: account)
                    == .retry("QUOTA_EXCEEDED", after: .seconds(1)))
            #expect(
                await client.send(Self.message("c-unavailable"), with: account) == .retry("UNAVAILABLE", after: nil))
            #expect(
                await client.send(Self.message("c-unavailable"), with: account) == .retry("UNAVAILABLE", after: nil))
            #expect(await client.send(Self.message("c-unavailable"), with: account).deliveredID != nil)
            let reserved = FCMMessage(token: "d", data: [("from", "me")], timeToLive: 60)
            #expect(await client.send(reserved, with: account) == .rejected("INVALID_ARGUMENT"))
            // Another project, or an assertion signed by a key Google does not know, is a credential problem.
            let otherProject = try FCMCredential(
                summary: Self.summary(account, project: "someone-else"), pem: account.pem)
            #expect(await client.send(Self.message("e"), with: otherProject) == .misconfigured("SENDER_ID_MISMATCH"))
            let stranger = try FCMCredential(
                summary: Self.summary(account, email: "stranger@demo-project.iam.gserviceaccount.com"),
                pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
            #expect(await client.send(Self.message("f"), with: stranger) == .misconfigured("invalid_grant"))
            #expect(try standIn.tokensIssued() == 1, "tokens belong to the account, whatever project a send names")
        }
    }

    static func summary(_ account: FCMCredential, project: String? = nil, email: String? = nil) -> JSONObject {
        var summary = account.summary
        if let project { summary["project_id"] = .string(project) }
        if let email { summary["client_email"] = .string(email) }
        return summary
    }
}

/// Tests/Peers/fcm-standin.py for a fresh service account on a free port.
struct FCMStandIn: Sendable {
    let folder: URL
    let port: Int
    /// The test CA that issued its certificate.
    let caFile: String
    /// The service account it grants tokens to.
    let account: FCMCredential

    func sends() throws -> [[String: Any]] { try lines("fcm.jsonl") }

    func tokensIssued() throws -> Int { try lines("fcm-tokens.jsonl").count }

    /// Makes the stand-in forget every access token it issued.
    func expireTokens(with http: HTTPClient) async throws {
        var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/__expire")
        request.method = .POST
        _ = try await http.execute(request, timeout: .seconds(30))
    }

    private func lines(_ name: String) throws -> [[String: Any]] {
        let text = (try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        }
    }

    /// Runs the stand-in while `body` runs.
    static func run(_ body: @Sendable (FCMStandIn) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try key.publicKey.pemRepresentation.write(
            to: folder.appendingPathComponent("public.pem"), atomically: true, encoding: .utf8)
        let port = try await FreePort.next()
        let tokenURI = "https://127.0.0.1:\(port)/token"
        let account = try FCMCredential(
            .object(
                JSONObject([
                    ("type", .string("service_account")), ("project_id", .string("demo-project")),
                    ("private_key_id", .string("kid1")),
                    ("private_key", .string(key.pemRepresentation)),
                    ("client_email", .string("push@demo-project.iam.gserviceaccount.com")),
                    ("token_uri", .string(tokenURI)),
                ])))
        let (tls, caFile) = try PeerProcess.writeTLSFiles(into: folder, commonName: "fcm-standin")
        let arguments =
            tls + [
                "--port", "\(port)", "--public-key", folder.appendingPathComponent("public.pem").path, "--client-email",
                account.clientEmail,
                "--token-uri", tokenURI, "--project", "demo-project", "--out", folder.path,
            ]
        try await PeerProcess.run(
            script: "Tests/Peers/fcm-standin.py", arguments: arguments, folder: folder,
            hint: "pip install pyjwt cryptography"
        ) {
            try await body(FCMStandIn(folder: folder, port: port, caFile: caFile, account: account))
        }
    }

    /// Runs the stand-in and a client that trusts it while `body` runs.
    static func with(_ body: @Sendable (FCMStandIn, FCMClient, HTTPClient, FCMCredential) async throws -> Void)
        async throws
    {
        try await run { standIn in
            let settings = PushSettings(fcmURL: "https://127.0.0.1:\(standIn.port)", caFile: standIn.caFile)
            let http = try settings.httpClient()
            do {
                try await body(
                    standIn, FCMClient(http: http, settings: settings, tokens: FCMTokens()), http, standIn.account)
            } catch {
                try? await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
    }
}
