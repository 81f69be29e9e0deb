import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing
import UsersService

/// Reset and confirmation links on an injected clock: single use, expiry, replacement, and
/// the emails' content.
@Suite(.timeLimit(.minutes(20))) struct EmailActionTests {
    typealias Fixture = AccountsTests.Fixture

    /// The token at the end of the last emailed link, once `count` emails went out
    /// (confirmations are sent in the background).
    static func lastToken(_ fixture: Fixture, _ kind: String, count: Int? = nil) async throws -> String {
        for _ in 0..<1_500 where await fixture.outbox.sent.count < count ?? 0 {
            try await Task.sleep(for: .milliseconds(20))
        }
        let mail = try #require(await fixture.outbox.sent.last)
        let text = try #require(mail.text)
        let link = try #require(text.split(separator: "\n").first { $0.contains("/account/\(kind)/") })
        #expect(link.hasPrefix("http://public.example/\(fixture.appID)/account/\(kind)/"))
        return String(link.split(separator: "/").last!)
    }

    @Test func resetLinksWorkOnceBeforeTheyExpire() async throws {
        try await AccountsTests.with { fixture in
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "old", "name": "Ann <A&B>"}"#)
            await fixture.expectError(3020, status: 404) {
                try await fixture.accounts.restorePassword(
                    appID: fixture.appID, identity: "nobody@example.com", clientAddress: nil, logger: fixture.logger)
            }
            try await fixture.accounts.restorePassword(
                appID: fixture.appID, identity: "ann@example.com", clientAddress: nil, logger: fixture.logger)
            let mail = try #require(await fixture.outbox.sent.last)
            #expect(mail.to == ["ann@example.com"] && mail.subject == "Reset your password")
            #expect(mail.html?.contains("Ann &lt;A&amp;B&gt;") == true && mail.text?.contains("60 minutes") == true)
            let token = try await Self.lastToken(fixture, "reset-password")
            let stored = try await fixture.strings("SELECT token_hash FROM users.action_tokens")
            #expect(stored.count == 1 && !stored[0].uppercased().contains(token))

            let session = try #require(try await fixture.login("ann@example.com", "old")["user-token"] as? String)
            _ = try await fixture.accounts.resetPassword(
                appID: fixture.appID, token: token, password: "new", logger: fixture.logger)
            #expect(try await !fixture.accounts.isValid(appID: fixture.appID, token: session, logger: fixture.logger))
            await fixture.expectError(3003) { _ = try await fixture.login("ann@example.com", "old") }
            _ = try await fixture.login("ann@example.com", "new")
            await fixture.expectError(3025, status: 404) {
                _ = try await fixture.accounts.resetPassword(
                    appID: fixture.appID, token: token, password: "again", logger: fixture.logger)
            }
            await fixture.expectError(3025, status: 404) {
                _ = try await fixture.accounts.resetPassword(
                    appID: fixture.appID, token: stored[0], password: "x", logger: fixture.logger)
            }

            try await fixture.accounts.restorePassword(
                appID: fixture.appID, identity: "ann@example.com", clientAddress: nil, logger: fixture.logger)
            let replaced = try await Self.lastToken(fixture, "reset-password")
            try await fixture.accounts.restorePassword(
                appID: fixture.appID, identity: "ann@example.com", clientAddress: nil, logger: fixture.logger)
            let latest = try await Self.lastToken(fixture, "reset-password")
            await fixture.expectError(3025, status: 404) {
                _ = try await fixture.accounts.resetPassword(
                    appID: fixture.appID, token: replaced, password: "x", logger: fixture.logger)
            }
            fixture.clock.advance(3_601)
            await fixture.expectError(3025, status: 404) {
                _ = try await fixture.accounts.resetPassword(
                    appID: fixture.appID, token: latest, password: "x", logger: fixture.logger)
            }
            _ = try await fixture.login("ann@example.com", "new")
        }
    }

    @Test func confirmationKeepsNewUsersOutUntilTheyFollowTheLink() async throws {
        try await AccountsTests.with { fixture in
            try await fixture.setPolicy("email_confirmation = true")
            let user = try await fixture.register(#"{"email": "bob@example.com", "password": "pw"}"#)
            #expect(user["userStatus"] as? String == "EMAIL_CONFIRMATION_PENDING")
            await fixture.expectError(3000, status: 401) { _ = try await fixture.login("bob@example.com", "pw") }
            let first = try await Self.lastToken(fixture, "confirm-email", count: 1)
            try await fixture.accounts.resendConfirmation(
                appID: fixture.appID, identity: "bob@example.com", clientAddress: nil, logger: fixture.logger)
            let second = try await Self.lastToken(fixture, "confirm-email")
            await fixture.expectError(3025, status: 404) {
                try await fixture.accounts.confirmEmail(appID: fixture.appID, token: first, logger: fixture.logger)
            }
            fixture.clock.advance(172_801)
            await fixture.expectError(3025, status: 404) {
                try await fixture.accounts.confirmEmail(appID: fixture.appID, token: second, logger: fixture.logger)
            }
            try await fixture.accounts.resendConfirmation(
                appID: fixture.appID, identity: "bob@example.com", clientAddress: nil, logger: fixture.logger)
            try await fixture.accounts.confirmEmail(
                appID: fixture.appID, token: try await Self.lastToken(fixture, "confirm-email"), logger: fixture.logger)
            _ = try await fixture.login("bob@example.com", "pw")
            await fixture.expectError(3025) {
                try await fixture.accounts.resendConfirmation(
                    appID: fixture.appID, identity: "bob@example.com", clientAddress: nil, logger: fixture.logger)
            }
            try await fixture.setPolicy("identity_property = 'name'")
            await fixture.expectError(3041) { _ = try await fixture.register(#"{"name": "x", "password": "p"}"#) }
        }
    }
}
