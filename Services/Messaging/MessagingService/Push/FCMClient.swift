import AsyncHTTPClient
import DataEngine
import Foundation
import NIOCore
import NIOHTTP1

/// One data-only message for one Android device (push-delivery §3.2): the Backendless Android SDK
/// builds the notification itself from the data, which a `notification` block would bypass.
struct FCMMessage: Sendable {
    let token: String
    /// String values only, as FCM requires.
    let data: [(String, String)]
    /// How long FCM keeps trying, in seconds.
    let timeToLive: Int64

    /// `{"message": {"token", "data", "android": {"priority": "HIGH", "ttl": "<n>s"}}}`.
    var body: JSONValue {
        .object(
            JSONObject([
                (
                    "message",
                    .object(
                        JSONObject([
                            ("token", .string(token)),
                            ("data", .object(JSONObject(data.map { ($0.0, JSONValue.string($0.1)) }))),
                            (
                                "android",
                                .object(
                                    JSONObject([("priority", .string("HIGH")), ("ttl", .string("\(timeToLive)s"))]))
                            ),
                        ]))
                )
            ]))
    }
}

/// Sends FCM HTTP v1 messages with a service account's OAuth token (push-delivery §2): the token
/// is granted for a signed RS256 assertion at the account's `token_uri`, kept by ``FCMTokens``,
/// and fetched again once when FCM answers 401.
struct FCMClient: Sendable {
    let http: HTTPClient
    let settings: PushSettings
    let tokens: FCMTokens
    /// Assertions are signed as of `now` (a test moves it).
    var now: @Sendable () -> Date = { Date() }

    func send(_ message: FCMMessage, with account: FCMCredential) async -> PushOutcome {
        let body = message.body.jsonText
        guard body.utf8.count <= 4_096 + 128 else { return .rejected("The message is over FCM's 4096 bytes") }
        for attempt in 0..<2 {
            let token: String
            do {
                token = try await tokens.token(for: account.clientEmail) { try await grant(account) }
            } catch let outcome as GrantFailure {
                return outcome.outcome
            } catch {
                return .retry("The OAuth token could not be fetched: \(error)", after: nil)
            }
            var request = HTTPClientRequest(url: settings.fcmURL + "/v1/projects/\(account.projectId)/messages:send")
            request.method = .POST
            request.headers.add(name: "authorization", value: "Bearer " + token)
            request.headers.add(name: "content-type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            do {
                let response = try await http.execute(request, timeout: .seconds(30))
                let answer = try await response.body.collect(upTo: 64 * 1024)
                if response.status == .unauthorized, attempt == 0 {
                    await tokens.expire(token, for: account.clientEmail)
                    continue
                }
                return Self.classify(response.status, response.headers, answer: answer)
            } catch {
                return .retry("FCM could not be reached: \(error)", after: nil)
            }
        }
        return .misconfigured("UNAUTHENTICATED")
    }

    /// Why no access token was granted, as the send's outcome.
    private struct GrantFailure: Error {
        let outcome: PushOutcome
    }

    /// A fresh access token for `account` and its lifetime.
    private func grant(_ account: FCMCredential) async throws -> (token: String, lifetime: Int) {
        let issued = Int64(now().timeIntervalSince1970.rounded(.down))
        let assertion = try JSONWebToken.rs256(
            header: JSONObject([
                ("alg", .string("RS256")), ("typ", .string("JWT")), ("kid", .string(account.privateKeyId)),
            ]),
            claims: JSONObject([
                ("iss", .string(account.clientEmail)),
                ("scope", .string("https://www.googleapis.com/auth/firebase.messaging")),
                ("aud", .string(account.tokenURI)), ("iat", .integer(issued)), ("exp", .integer(issued + 3_600)),
            ]),
            key: account.key)
        var request = HTTPClientRequest(url: account.tokenURI)
        request.method = .POST
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(
            ByteBuffer(
                string: "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + assertion))
        let response = try await http.execute(request, timeout: .seconds(30))
        let answer = (try? JSONParser.parse(Array(try await response.body.collect(upTo: 64 * 1024).readableBytesView)))?
            .object
        guard response.status == .ok, case .string(let token)? = answer?["access_token"] else {
            let reason = answer?["error"]?.string ?? "HTTP \(response.status.code)"
            throw GrantFailure(
                outcome: response.status.code >= 500 ? .retry(reason, after: nil) : .misconfigured(reason))
        }
        let lifetime: Int =
            switch answer?["expires_in"] {
            case .integer(let seconds)?: Int(seconds)
            default: 3_600
            }
        return (token, lifetime)
    }

    /// Google's status and FCM error code as an outcome (push-delivery §2.3).
    private static func classify(_ status: HTTPResponseStatus, _ headers: HTTPHeaders, answer: ByteBuffer)
        -> PushOutcome
    {
        let object = (try? JSONParser.parse(Array(answer.readableBytesView)))?.object
        if status == .ok { return .delivered(object?["name"]?.string ?? "") }
        let error = object?["error"]?.object
        let details = error?["details"]?.array ?? []
        let code =
            details.compactMap { $0.object?["errorCode"]?.string }.first ?? error?["status"]?.string
            ?? "HTTP \(status.code)"
        let tokenField = details.contains { detail in
            detail.object?["fieldViolations"]?.array?.contains { $0.object?["field"]?.string == "message.token" }
                == true
        }
        let retryAfter = headers.first(name: "retry-after").flatMap(Int64.init).map { Duration.seconds($0) }
        if code == "UNREGISTERED" { return .unregistered(code, since: nil) }
        switch (status.code, code) {
        case (400, "INVALID_ARGUMENT") where tokenField: return .unregistered("InvalidToken", since: nil)
        case (429, _), (500..., _): return .retry(code, after: retryAfter)
        case (401, _), (403, _): return .misconfigured(code)
        default: return .rejected(code)
        }
    }
}
