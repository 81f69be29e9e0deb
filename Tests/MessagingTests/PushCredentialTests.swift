import Crypto
import DataEngine
import Foundation
import InternalProtocol
import NIOHTTP1
import PostgresNIO
import ServiceRuntime
import TestSupport
import Testing
import _CryptoExtras

@testable import MessagingService

/// Push credentials (issue 16 item 6, first part): set with the server-code key, stored with the
/// key sealed, never answered, opened back into working signing keys; and the JWTs they sign.
@Suite(.timeLimit(.minutes(20))) struct PushCredentialTests {
    static let secretsKey = Data((0..<32).map { UInt8(($0 * 7) % 256) }).base64EncodedString()

    static func apnsBody(_ key: P256.Signing.PrivateKey, keyId: String = "ABCDE12345") -> String {
        let pem = key.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
        return
            #"{"keyId": "\#(keyId)", "teamId": "TEAM123456", "bundleId": "com.example.app", "privateKey": "\#(pem)", "production": true}"#
    }

    static func fcmBody(_ pem: String, tokenURI: String = "https://oauth2.example.test/token") -> String {
        let escaped = pem.replacingOccurrences(of: "\n", with: "\\n")
        return
            #"{"type": "service_account", "project_id": "demo-project", "private_key_id": "kid1", "private_key": "\#(escaped)", "client_email": "push@demo-project.iam.gserviceaccount.com", "token_uri": "\#(tokenURI)"}"#
    }

    @Test func credentialsAreSealedNeverAnsweredAndOpenBack() async throws {
        let apnsKey = P256.Signing.PrivateKey()
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await TestCluster.with(environment: ["BAAS_SECRETS_KEY": Self.secretsKey]) { cluster async throws in
            let apns = try await cluster.send(
                .PUT, "/messaging/push/credentials/apns", Self.apnsBody(apnsKey), key: .serverCode)
            #expect(apns.status == 200, "\(apns.text)")
            let fcm = try await cluster.send(
                .PUT, "/messaging/push/credentials/FCM", Self.fcmBody(rsaKey.pemRepresentation), key: .serverCode)
            #expect(fcm.status == 200, "\(fcm.text)")
            let listed = try await cluster.send(.GET, "/messaging/push/credentials", key: .serverCode)
            let ios = try #require(listed.json["apns"] as? [String: Any], "\(listed.text)")
            #expect(
                ios["keyId"] as? String == "ABCDE12345" && ios["bundleId"] as? String == "com.example.app"
                    && ios["production"] as? Bool == true)
            #expect((listed.json["fcm"] as? [String: Any])?["project_id"] as? String == "demo-project")
            #expect(
                !listed.text.contains("PRIVATE KEY") && !listed.text.contains("privateKey")
                    && !listed.text.contains("private_key\""))

            try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
                var stored = ""
                for try await (summary, sealed) in try await client.query(
                    "SELECT summary::text, sealed_key FROM messaging.push_credentials", logger: TestDatabase.logger
                ).decode((String, String).self) { stored += summary + sealed }
                #expect(!stored.isEmpty && !stored.contains("PRIVATE KEY"), "no key in the clear in the database")
                let box = SecretBox(key: SymmetricKey(data: Data(base64Encoded: Self.secretsKey)!))
                let store = PushCredentialStore(database: client, logger: TestDatabase.logger, box: box)
                let opened = try #require(try await store.apns(app: cluster.app.id))
                #expect(
                    opened.key.publicKey.rawRepresentation == apnsKey.publicKey.rawRepresentation
                        && opened.teamId == "TEAM123456")
                let account = try #require(try await store.fcm(app: cluster.app.id))
                #expect(account.key.publicKey.derRepresentation == rsaKey.publicKey.derRepresentation)
                #expect(account.tokenURI == "https://oauth2.example.test/token")
                // A sealed key copied to another app's row does not open there.
                try await client.query(
                    """
                    INSERT INTO messaging.push_credentials (app_id, provider, summary, sealed_key, updated)
                    SELECT 'other-app', provider, summary, sealed_key, updated FROM messaging.push_credentials WHERE provider = 'apns'
                    """, logger: TestDatabase.logger)
                await #expect(throws: SecretBox.Unopenable.self) { try await store.apns(app: "other-app") }
                // Nor does a key whose shown part was changed in the database (its token_uri pointed elsewhere).
                try await client.query(
                    """
                    UPDATE messaging.push_credentials SET summary = replace(summary, 'oauth2.example.test', 'evil.example')
                    WHERE provider = 'fcm'
                    """, logger: TestDatabase.logger)
                await #expect(throws: SecretBox.Unopenable.self) { try await store.fcm(app: cluster.app.id) }
                let keyless = PushCredentialStore(database: client, logger: TestDatabase.logger, box: nil)
                await #expect(throws: ErrorEnvelope.self) { try await keyless.apns(app: cluster.app.id) }
            }

            #expect(
                try await cluster.send(.DELETE, "/messaging/push/credentials/fcm", key: .serverCode).json["result"]
                    as? Bool == true)
            #expect(
                try await cluster.send(.DELETE, "/messaging/push/credentials/fcm", key: .serverCode).json["result"]
                    as? Bool == false)
            #expect(try await cluster.send(.GET, "/messaging/push/credentials", key: .serverCode).json["fcm"] == nil)
        }
    }

    @Test func badCredentialsAreRefused() async throws {
        let apnsKey = P256.Signing.PrivateKey()
        let rsa1024 = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        try await TestCluster.with(environment: ["BAAS_SECRETS_KEY": Self.secretsKey]) { cluster async throws in
            typealias Refusal = (path: String, body: String?, key: APIKeyKind, status: Int, code: Int)
            let refused: [Refusal] = [
                ("apns", Self.apnsBody(apnsKey), .rest, 403, 4000),
                ("gcm", Self.apnsBody(apnsKey), .serverCode, 400, 5011),
                ("apns", nil, .serverCode, 400, 5011),
                ("apns", Self.apnsBody(apnsKey, keyId: "SHORT"), .serverCode, 400, 5011),
                (
                    "apns", Self.apnsBody(apnsKey).replacingOccurrences(of: "BEGIN", with: "BEGUN"), .serverCode, 400,
                    5011
                ),
                (
                    "apns",
                    Self.apnsBody(apnsKey).replacingOccurrences(
                        of: #""production": true"#, with: #""production": "yes""#), .serverCode, 400, 5011
                ),
                (
                    "apns",
                    #"{"keyId": "ABCDE12345", "teamId": "TEAM123456", "bundleId": "b", "privateKey": "\#(rsaKey.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n"))"}"#,
                    .serverCode, 400, 5011
                ),
                (
                    "fcm", Self.fcmBody(rsaKey.pemRepresentation, tokenURI: "http://plain.example/token"), .serverCode,
                    400, 5011
                ),
                ("fcm", Self.fcmBody(rsa1024.pemRepresentation), .serverCode, 400, 5011),
                ("fcm", Self.fcmBody(apnsKey.pemRepresentation), .serverCode, 400, 5011),
                (
                    "fcm",
                    Self.fcmBody(rsaKey.pemRepresentation).replacingOccurrences(of: "service_account", with: "user"),
                    .serverCode, 400, 5011
                ),
            ]
            for (provider, body, key, status, code) in refused {
                let answer = try await cluster.send(.PUT, "/messaging/push/credentials/\(provider)", body, key: key)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(provider) \(body?.prefix(60) ?? ""): \(answer.text)")
            }
            #expect(try await cluster.send(.GET, "/messaging/push/credentials").json["code"] as? Int == 4000)
            #expect(
                try await cluster.send(.GET, "/messaging/push/credentials", key: .serverCode).text == "{}",
                "nothing was stored")
        }
        // Without a secrets key credentials cannot be stored at all.
        try await TestCluster.with { cluster async throws in
            let answer = try await cluster.send(
                .PUT, "/messaging/push/credentials/apns", Self.apnsBody(apnsKey), key: .serverCode)
            #expect(answer.status == 503 && answer.json["code"] as? Int == 5017, "\(answer.text)")
        }
    }

    @Test func tokensAreSignedAsTheProvidersVerifyThem() throws {
        let ecKey = P256.Signing.PrivateKey()
        let header = JSONObject([("alg", .string("ES256")), ("kid", .string("ABCDE12345"))])
        let claims = JSONObject([("iss", .string("TEAM123456")), ("iat", .integer(1_795_454_925))])
        let es256 = try JSONWebToken.es256(header: header, claims: claims, key: ecKey)
        let parts = es256.split(separator: ".").map(String.init)
        #expect(parts.count == 3 && !es256.contains("=") && !es256.contains("+") && !es256.contains("/"))
        #expect(try Self.json(parts[0]) == .object(header) && Self.json(parts[1]) == .object(claims))
        let signature = try Self.bytes(parts[2])
        #expect(signature.count == 64, "JWS wants raw r ‖ s, not DER")
        #expect(
            ecKey.publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature),
                for: SHA256.hash(data: Data((parts[0] + "." + parts[1]).utf8))))
        #expect(
            !P256.Signing.PrivateKey().publicKey.isValidSignature(
                try P256.Signing.ECDSASignature(rawRepresentation: signature),
                for: SHA256.hash(data: Data((parts[0] + "." + parts[1]).utf8))))

        let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let rs256 = try JSONWebToken.rs256(
            header: JSONObject([("alg", .string("RS256")), ("typ", .string("JWT"))]), claims: claims, key: rsaKey)
        let rsParts = rs256.split(separator: ".").map(String.init)
        let rsSignature = _RSA.Signing.RSASignature(rawRepresentation: try Self.bytes(rsParts[2]))
        let digest = SHA256.hash(data: Data((rsParts[0] + "." + rsParts[1]).utf8))
        #expect(rsaKey.publicKey.isValidSignature(rsSignature, for: digest, padding: .insecurePKCS1v1_5))
        #expect(
            !rsaKey.publicKey.isValidSignature(rsSignature, for: digest, padding: .PSS), "PKCS #1 v1.5, as RS256 says")
    }

    private static func bytes(_ base64URL: String) throws -> Data {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else {
            throw PubSubTestFailure(description: "not base64url: \(base64URL)")
        }
        return data
    }

    private static func json(_ base64URL: String) throws -> JSONValue {
        try JSONParser.parse(Array(try bytes(base64URL)))
    }
}
