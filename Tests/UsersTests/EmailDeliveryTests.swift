import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// Password reset and email confirmation end to end: the gateway, users-service,
/// messaging-service and a real SMTP server; the test reads the mail and follows its link.
@Suite(.timeLimit(.minutes(20))) struct EmailDeliveryTests {
    static let publicURL = "http://public.example"

    static func withCluster(_ body: @Sendable @escaping (TestCluster, SMTPSink) async throws -> Void) async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
                "BAAS_SMTP_FROM": "app@example.com", "BAAS_USERS_PUBLIC_URL": publicURL,
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in try await body(cluster, sink)
            }
        }
    }

    /// The link in the last received mail, pointed at the test's gateway.
    private func link(in sink: SMTPSink, _ cluster: TestCluster, count: Int) async throws -> String {
        var messages: [[String: Any]] = []
        for _ in 0..<1_500 where messages.count < count {
            messages = try sink.messages()
            if messages.count < count { try await Task.sleep(for: .milliseconds(20)) }
        }
        let text = try #require(messages.last?["text"] as? String)
        let start = try #require(text.range(of: Self.publicURL))
        let link = text[start.upperBound...].prefix { !$0.isWhitespace }
        return cluster.gatewayURL + link
    }

    @Test func aForgottenPasswordIsResetThroughTheMailedLink() async throws {
        try await Self.withCluster { cluster, sink in
            _ = try await cluster.send(
                .POST, "/users/register", #"{"email": "ann@example.com", "password": "old", "name": "Ann"}"#)
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "old"}"#)
            let token = try #require(login.json["user-token"] as? String)
            #expect(try await cluster.send(.GET, "/users/userroles", token: token).status == 200)

            let unknown = try await cluster.send(.GET, "/users/restorepassword/nobody%40example.com")
            #expect(unknown.status == 404 && unknown.json["code"] as? Int == 3020)
            #expect(try await cluster.send(.GET, "/users/restorepassword/ann%40example.com").status == 200)
            let link = try await link(in: sink, cluster, count: 1)
            let mail = try #require(try sink.messages().first)
            #expect(
                mail["recipients"] as? [String] == ["ann@example.com"]
                    && mail["mailFrom"] as? String == "app@example.com")
            #expect((mail["headers"] as? [String: String])?["subject"] == "Reset your password")
            #expect((mail["html"] as? String)?.contains(String(link.dropFirst(cluster.gatewayURL.count))) == true)

            let page = try await HTTPTestClient.send(.GET, link)
            #expect(page.status == 200 && page.text.contains("<form method=\"post\">"))
            let form = [("Content-Type", "application/x-www-form-urlencoded")]
            let saved = try await HTTPTestClient.send(
                .POST, link, headers: form, body: Data("password=n3w+pass%21".utf8))
            #expect(saved.status == 200 && saved.text.contains("Password changed"), "\(saved.text)")
            let stale = try await cluster.send(.GET, "/users/userroles", token: token)
            #expect(stale.status == 401 && stale.json["code"] as? Int == 3064)
            let old = try await cluster.send(.POST, "/users/login", #"{"login": "ann@example.com", "password": "old"}"#)
            #expect(old.json["code"] as? Int == 3003)
            let new = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "n3w pass!"}"#)
            #expect(new.json["user-token"] is String, "\(new.text)")
            let reused = try await HTTPTestClient.send(.POST, link, headers: form, body: Data("password=again".utf8))
            #expect(reused.status == 404 && reused.json["code"] as? Int == 3025)
        }
    }

    @Test func newUsersConfirmTheirAddressThroughTheMailedLink() async throws {
        try await Self.withCluster { cluster, sink in
            let denied = try await cluster.send(.PUT, "/users/settings", #"{"emailConfirmation": true}"#)
            #expect(denied.status == 403 && denied.json["code"] as? Int == 4000)
            for bad in [
                #"{"nope": 1}"#, #"{"maxSessions": 0}"#, #"{"maxSessions": "2"}"#, #"{"identityProperty": "password"}"#,
                "[]",
            ] {
                let refused = try await cluster.send(.PUT, "/users/settings", bad, key: .serverCode)
                #expect(refused.status == 400, "\(bad) → \(refused.text)")
            }
            let settings = try await cluster.send(
                .PUT, "/users/settings", #"{"emailConfirmation": true}"#, key: .serverCode)
            #expect(settings.status == 200 && settings.json["emailConfirmation"] as? Bool == true, "\(settings.text)")
            #expect(try await cluster.send(.GET, "/users/settings", key: .serverCode).json["maxSessions"] as? Int == 1)

            let user = try await cluster.send(
                .POST, "/users/register", #"{"email": "bob@example.com", "password": "pw"}"#)
            #expect(user.json["userStatus"] as? String == "EMAIL_CONFIRMATION_PENDING", "\(user.text)")
            let early = try await cluster.send(
                .POST, "/users/login", #"{"login": "bob@example.com", "password": "pw"}"#)
            #expect(early.status == 401 && early.json["code"] as? Int == 3000)
            let first = try await link(in: sink, cluster, count: 1)
            #expect(try await cluster.send(.POST, "/users/resendconfirmation/bob%40example.com").status == 200)
            let second = try await link(in: sink, cluster, count: 2)
            let replaced = try await HTTPTestClient.send(.GET, first)
            #expect(replaced.status == 404 && replaced.json["code"] as? Int == 3025)
            let confirmed = try await HTTPTestClient.send(.GET, second)
            #expect(confirmed.status == 200 && confirmed.text.contains("confirmed"))
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "bob@example.com", "password": "pw"}"#)
            #expect(login.json["userStatus"] as? String == "ENABLED" && login.json["user-token"] is String)
        }
    }

    @Test func templatesAreEditablePerApp() async throws {
        try await Self.withCluster { cluster, sink in
            _ = try await cluster.send(
                .POST, "/users/register", #"{"email": "cy@example.com", "password": "pw", "name": "<Cy>"}"#)
            let standard = try await cluster.send(.GET, "/users/emailtemplates/passwordReset", key: .serverCode)
            #expect(standard.json["subject"] as? String == "Reset your password")
            let edit =
                #"{"subject": "Hi {{name}}", "text": "Go: {{link}}", "html": "<b>{{name}}</b> <a href=\"{{link}}\">reset</a>"}"#
            #expect(try await cluster.send(.PUT, "/users/emailtemplates/passwordReset", edit).status == 403)
            #expect(
                try await cluster.send(.PUT, "/users/emailtemplates/passwordReset", edit, key: .serverCode).status
                    == 200)
            #expect(try await cluster.send(.PUT, "/users/emailtemplates/nope", edit, key: .serverCode).status == 404)
            #expect(try await cluster.send(.GET, "/users/restorepassword/cy%40example.com").status == 200)
            _ = try await link(in: sink, cluster, count: 1)
            let mail = try #require(try sink.messages().last)
            #expect((mail["headers"] as? [String: String])?["subject"] == "Hi <Cy>")
            #expect((mail["html"] as? String)?.hasPrefix("<b>&lt;Cy&gt;</b>") == true)

            let off = #"{"subject": "x", "text": "x", "html": "x", "enabled": false}"#
            _ = try await cluster.send(.PUT, "/users/emailtemplates/passwordReset", off, key: .serverCode)
            let disabled = try await cluster.send(.GET, "/users/restorepassword/cy%40example.com")
            #expect(disabled.status == 403 && disabled.json["code"] as? Int == 3025)
        }
    }
}
