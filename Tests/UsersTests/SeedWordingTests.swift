import DataEngine
import Foundation
import InternalProtocol
import TestSupport
import Testing
import UsersService

/// Every users error the seed documents comes with the seed's wording (seed-inventory §2.2) and
/// a fitting HTTP status; where we add detail, the seed's text still leads.
@Suite(.timeLimit(.minutes(20))) struct SeedWordingTests {
    typealias Fixture = AccountsTests.Fixture

    static let seed: [Int: (message: String, status: Int)] = [
        2005: ("Could not find role.", 404),
        3000: ("Login has been disabled for the user account.", 401),
        3002: (
            "User cannot login because Multiple Logins disabled and there is a logged in user for the account.", 401
        ),
        3003: ("Invalid login or password.", 401),
        3006: ("Either login or password is an empty string value.", 400),
        3011: ("Missing \"password\" property", 400),
        3013: ("Missing value for the identity property", 400),
        3018: (
            "The property marked as \"identity\" is being updated and another user already has the specified value which must be unique.",
            409
        ),
        3020: ("Unable to find user with the specified login (invalid user identity).", 404),
        3028: ("User is not logged in.", 401),
        3029: (
            "Cannot modify properties of another user. Returned when one user is logged and the call attempts to modify properties of another user.",
            403
        ),
        3030: ("Unable to locate user account - invalid user id.", 404),
        3031: ("A new \"dynamic\" property is being added, but dynamic property definition is disabled.", 400),
        3033: ("User with the same identity already exists", 409),
        3036: ("Account locked out due to too many failed logins.", 401),
        3039: ("Property \"id\" cannot be used in the registration call", 400),
        3040: ("Email address is in the wrong format", 400),
        3044: ("Multiple login limit for the same user account has been reached.", 401),
        3045: ("Required properties in the provided object do not contain values.", 400),
        3057: ("Could not find user by id or identity.", 404),
        3058: ("Could not assign role to user.", 400),
        3059: ("Could not unassign role to user.", 400),
        8000: ("Property value exceeds the length limit", 400),
    ]

    /// Runs `body`, which must fail with `code`, and checks wording and status against the seed.
    func expectSeed(_ code: Int, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code)")
        } catch let error as ErrorEnvelope {
            let (message, status) = Self.seed[code]!
            #expect(error.code == code && error.status == status && error.message.hasPrefix(message), "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func registrationLoginAndProfileErrorsUseTheSeedWording() async throws {
        try await AccountsTests.with { fixture in
            let server = AccountsTests.serverCode(fixture)
            for (json, code) in [
                (#"{"email": "a@example.com"}"#, 3011), (#"{"password": "p"}"#, 3013),
                (#"{"id": 1, "email": "a@example.com", "password": "p"}"#, 3039),
                (#"{"email": "nope", "password": "p"}"#, 3040),
                (#"{"email": "a@example.com", "password": "\#(String(repeating: "x", count: 73))"}"#, 8000),
            ] {
                await expectSeed(code) { _ = try await fixture.register(json) }
            }
            let (ann, _) = try await ProfileTests.loggedIn(fixture, "ann@example.com")
            let (bob, _) = try await ProfileTests.loggedIn(fixture, "bob@example.com")
            await expectSeed(3033) { _ = try await fixture.register(#"{"email": "ann@example.com", "password": "p"}"#) }
            await expectSeed(3003) { _ = try await fixture.login("ann@example.com", "wrong") }
            await expectSeed(3006) { _ = try await fixture.login("", "p") }
            try await fixture.setPolicy("reject_extra_logins = true")
            await expectSeed(3002) { _ = try await fixture.login("ann@example.com", "pw") }
            try await fixture.setPolicy("max_sessions = 2")
            _ = try await fixture.login("ann@example.com", "pw")
            await expectSeed(3044) { _ = try await fixture.login("ann@example.com", "pw") }

            func update(_ id: String, _ json: String, as identity: Identity) async throws {
                _ = try await fixture.accounts.updateUser(
                    id: id, body: try fixture.body(json), identity: identity, logger: fixture.logger)
            }
            let annID = ann.userId!
            await expectSeed(3028) {
                try await update(annID, "{}", as: .anonymous(appId: fixture.appID, keyKind: .rest))
            }
            await expectSeed(3029) { try await update(annID, "{}", as: bob) }
            await expectSeed(3030) { try await update("nobody", "{}", as: server) }
            await expectSeed(3018) { try await update(annID, #"{"email": "bob@example.com"}"#, as: ann) }
            await expectSeed(3045) { try await update(annID, #"{"email": ""}"#, as: ann) }
            _ = try await fixture.engine.setDynamicSchema(false, identity: server, logger: fixture.logger)
            await expectSeed(3031) { try await update(annID, #"{"hobby": "x"}"#, as: ann) }
            await expectSeed(3020) {
                try await fixture.accounts.restorePassword(
                    appID: fixture.appID, identity: "x@example.com", clientAddress: nil, logger: fixture.logger)
            }

            _ = try await fixture.accounts.setStatus(
                id: bob.userId!, body: try fixture.body(#"{"userStatus": "EMAIL_CONFIRMATION_PENDING"}"#),
                identity: server,
                logger: fixture.logger)
            await expectSeed(3000) { _ = try await fixture.login("bob@example.com", "pw") }
            try await fixture.setPolicy("max_failed_logins = 1")
            _ = try? await fixture.login("ann@example.com", "wrong")
            await expectSeed(3036) { _ = try await fixture.login("ann@example.com", "pw") }
        }
    }

    @Test func roleErrorsUseTheSeedWording() async throws {
        try await AccountsTests.with { fixture in
            let server = AccountsTests.serverCode(fixture)
            _ = try await fixture.register(#"{"email": "ann@example.com", "password": "p"}"#)
            _ = try await fixture.accounts.createRole("Team", identity: server, logger: fixture.logger)
            func assign(_ json: String, _ assign: Bool = true) async throws {
                let body = try fixture.body(json)
                if assign {
                    _ = try await fixture.accounts.assignRole(body: body, identity: server, logger: fixture.logger)
                } else {
                    _ = try await fixture.accounts.unassignRole(body: body, identity: server, logger: fixture.logger)
                }
            }
            await expectSeed(2005) { try await assign(#"{"user": "ann@example.com", "roleName": "Nope"}"#) }
            await expectSeed(3057) { try await assign(#"{"user": "nobody", "roleName": "Team"}"#) }
            await expectSeed(3058) { try await assign(#"{"user": "ann@example.com", "roleName": "RestUser"}"#) }
            await expectSeed(3059) { try await assign(#"{"user": "ann@example.com", "roleName": "Team"}"#, false) }
        }
    }
}
