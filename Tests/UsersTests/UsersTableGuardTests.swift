import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// `Users` rows through the data API follow the users API's rules, in every form a write takes:
/// only the user or the server-code key changes or deletes a user's row, email, status and
/// password change only through users-service, anonymous callers cannot list users' addresses,
/// and a reset link dies with the address it was mailed to.
@Suite(.timeLimit(.minutes(20))) struct UsersTableGuardTests {
    static let publicURL = "http://public.example"

    /// `where=objectId = '<id>'`, encoded for a query string.
    private static func whereID(_ id: String) -> String {
        "where=objectId%20%3D%20%27\(id)%27"
    }

    /// A unit of work that updates one `Users` row.
    private static func unitUpdating(_ id: String, name: String) -> String {
        #"""
        {"operations": [{"operationType": "UPDATE", "table": "Users", "opResultId": "change",
          "payload": {"objectId": "\#(id)", "name": "\#(name)"}}]}
        """#
    }

    /// The user's row as the user reads it.
    private static func row(_ cluster: TestCluster, _ id: String, token: String) async throws -> [String: any Sendable]
    {
        let read = try await cluster.send(.GET, "/data/Users/\(id)", token: token)
        #expect(read.status == 200, "\(read.text)")
        return read.json
    }

    @Test func anonymousCallersCannotChangeDeleteOrListUsers() async throws {
        try await TestCluster.shared { cluster async throws in
            let (annID, annToken) = try await cluster.account("ann@example.com")
            let (bobID, _) = try await cluster.account("bob@example.com")

            // The probe's takeover: an address of the attacker's, then a reset link to it.
            let takeover = try await cluster.send(.PUT, "/data/Users/\(annID)", #"{"email": "attacker@example.com"}"#)
            #expect((400..<500).contains(takeover.status), "\(takeover.text)")
            let reset = try await cluster.send(.GET, "/users/restorepassword/attacker%40example.com")
            #expect(reset.status == 404 && reset.json["code"] as? Int == 3020, "\(reset.text)")
            for body in [
                #"{"userStatus": "DISABLED"}"#, #"{"name": "Mallory"}"#, #"{"EMAIL": "attacker@example.com"}"#,
            ] {
                let refused = try await cluster.send(.PUT, "/data/Users/\(annID)", body)
                #expect((400..<500).contains(refused.status), "\(body): \(refused.text)")
            }
            let saved = try await cluster.send(.PUT, "/data/Users", #"{"objectId": "\#(annID)", "name": "Mallory"}"#)
            #expect((400..<500).contains(saved.status), "\(saved.text)")
            let upserted = try await cluster.send(
                .PUT, "/data/Users/upsert", #"{"objectId": "\#(annID)", "name": "Mallory"}"#)
            #expect((400..<500).contains(upserted.status), "\(upserted.text)")
            let bulk = try await cluster.send(.PUT, "/data/bulk/Users?\(Self.whereID(annID))", #"{"name": "Mallory"}"#)
            #expect(bulk.status == 403, "\(bulk.text)")
            let work = try await cluster.send(
                .POST, "/transaction/unit-of-work", Self.unitUpdating(annID, name: "Mallory"))
            #expect(work.json["success"] as? Bool == false, "\(work.text)")

            // An account an administrator disabled stays disabled.
            let disabled = try await cluster.send(
                .PUT, "/users/\(bobID)/status", #"{"userStatus": "DISABLED"}"#, key: .serverCode)
            #expect(disabled.status == 200, "\(disabled.text)")
            let enabled = try await cluster.send(.PUT, "/data/Users/\(bobID)", #"{"userStatus": "ENABLED"}"#)
            #expect((400..<500).contains(enabled.status), "\(enabled.text)")
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "bob@example.com", "password": "pw"}"#)
            #expect(login.json["code"] as? Int == 3090, "\(login.text)")

            // No listing of users or their addresses, not even one by one.
            let listed = try await cluster.send(.GET, "/data/Users?props=email&pageSize=100")
            #expect(listed.status == 403 && !listed.text.contains("@example.com"), "\(listed.text)")
            let one = try await cluster.send(.GET, "/data/Users/\(annID)?props=email")
            #expect(one.status == 403 && !one.text.contains("@example.com"), "\(one.text)")
            let probed = try await cluster.send(.GET, "/data/Users/count?where=email%20%3D%20%27ann%40example.com%27")
            #expect(probed.status == 403, "\(probed.text)")

            // Nor deletes, one or many.
            let deleted = try await cluster.send(.DELETE, "/data/Users/\(annID)")
            #expect(deleted.status == 403, "\(deleted.text)")
            let bulkDeleted = try await cluster.send(.DELETE, "/data/bulk/Users?\(Self.whereID(annID))")
            #expect(bulkDeleted.status == 403, "\(bulkDeleted.text)")

            let ann = try await Self.row(cluster, annID, token: annToken)
            #expect(ann["email"] as? String == "ann@example.com" && ann["userStatus"] as? String == "ENABLED")
            #expect(ann["name"] as? String != "Mallory", "\(ann)")
        }
    }

    @Test func onlyTheUserOrTheServerCodeKeyChangesAUsersRow() async throws {
        try await TestCluster.shared { cluster async throws in
            let (annID, annToken) = try await cluster.account("ann@example.com")
            let (bobID, bobToken) = try await cluster.account("bob@example.com")

            // Bob cannot change, take over or delete Ann's row, in any form.
            for body in [#"{"email": "bob2@example.com"}"#, #"{"userStatus": "DISABLED"}"#, #"{"name": "Mallory"}"#] {
                let refused = try await cluster.send(.PUT, "/data/Users/\(annID)", body, token: bobToken)
                #expect((400..<500).contains(refused.status), "\(body): \(refused.text)")
            }
            let upserted = try await cluster.send(
                .PUT, "/data/Users/upsert", #"{"objectId": "\#(annID)", "name": "Mallory"}"#, token: bobToken)
            #expect(upserted.status == 403, "\(upserted.text)")
            let bulk = try await cluster.send(
                .PUT, "/data/bulk/Users?\(Self.whereID(annID))", #"{"name": "Mallory"}"#, token: bobToken)
            #expect(bulk.status == 200 && bulk.text == "0", "\(bulk.text)")
            let work = try await cluster.send(
                .POST, "/transaction/unit-of-work", Self.unitUpdating(annID, name: "Mallory"), token: bobToken)
            #expect(work.json["success"] as? Bool == false, "\(work.text)")
            #expect((work.json["error"] as? [String: Any])?["code"] as? Int == 1023, "\(work.text)")
            let deleted = try await cluster.send(.DELETE, "/data/Users/\(annID)", token: bobToken)
            #expect(deleted.status == 403, "\(deleted.text)")
            let bulkDeleted = try await cluster.send(
                .DELETE, "/data/bulk/Users?\(Self.whereID(annID))", token: bobToken)
            #expect(bulkDeleted.status == 200 && bulkDeleted.text == "0", "\(bulkDeleted.text)")
            // Not his own status either, nor an address outside the users API's checks in bulk.
            let ownStatus = try await cluster.send(
                .PUT, "/data/bulk/Users?\(Self.whereID(bobID))", #"{"userStatus": "ENABLED"}"#, token: bobToken)
            #expect(ownStatus.status == 400 && ownStatus.json["code"] as? Int == 1022, "\(ownStatus.text)")

            var ann = try await Self.row(cluster, annID, token: annToken)
            #expect(ann["email"] as? String == "ann@example.com" && ann["userStatus"] as? String == "ENABLED")
            #expect(ann["name"] as? String != "Mallory", "\(ann)")

            // Ann herself may, through each form; so may the server-code key.
            let own = try await cluster.send(.PUT, "/data/Users/\(annID)", #"{"name": "Ann"}"#, token: annToken)
            #expect(own.status == 200 && own.json["name"] as? String == "Ann", "\(own.text)")
            let ownWork = try await cluster.send(
                .POST, "/transaction/unit-of-work", Self.unitUpdating(annID, name: "Ann B"), token: annToken)
            #expect(ownWork.json["success"] as? Bool == true, "\(ownWork.text)")
            ann = try await Self.row(cluster, annID, token: annToken)
            #expect(ann["name"] as? String == "Ann B", "\(ann)")
            let server = try await cluster.send(.PUT, "/data/Users/\(bobID)", #"{"name": "Robert"}"#, key: .serverCode)
            #expect(server.status == 200 && server.json["name"] as? String == "Robert", "\(server.text)")
            let listed = try await cluster.send(.GET, "/data/Users?props=email&pageSize=100", key: .serverCode)
            #expect(listed.status == 200 && listed.text.contains("ann@example.com"), "\(listed.text)")
        }
    }

    /// Whether `token` still opens the user's session: polled (bounded) because the gateways
    /// hear of an ended session when the deleting transaction's announcement arrives.
    private static func tokenWorks(_ cluster: TestCluster, _ token: String) async throws -> Bool {
        for _ in 0..<200 {
            let valid = try await cluster.send(.GET, "/users/isvalidusertoken/\(token)")
            let used = try await cluster.send(.GET, "/users/userroles", token: token)
            if valid.text == "false" && used.status == 401 && used.json["code"] as? Int == 3064 { return false }
            try await Task.sleep(for: .milliseconds(100))
        }
        return true
    }

    @Test func deletingAUsersRowEndsTheirSessionsPasswordAndRoles() async throws {
        try await TestCluster.shared { cluster async throws in
            let (annID, annToken) = try await cluster.account("ann@example.com")
            let (bobID, bobToken) = try await cluster.account("bob@example.com")
            let (carlID, carlToken) = try await cluster.account("carl@example.com")
            let (_, danToken) = try await cluster.account("dan@example.com")
            #expect(
                (200..<300).contains(try await cluster.send(.PUT, "/users/roles/moderator", key: .serverCode).status))
            let assigned = try await cluster.send(
                .POST, "/users/assignRole", #"{"user": "\#(annID)", "roleName": "moderator"}"#, key: .serverCode)
            #expect(assigned.status == 200, "\(assigned.text)")
            // Used once, so that a gateway has the token cached when the row goes.
            for token in [annToken, bobToken, carlToken] {
                #expect(try await cluster.send(.GET, "/users/userroles", token: token).status == 200)
            }

            // The administrator deletes Ann, Bob deletes himself, Carl goes in a bulk delete.
            let byAdmin = try await cluster.send(.DELETE, "/data/Users/\(annID)", key: .serverCode)
            #expect(byAdmin.status == 200, "\(byAdmin.text)")
            let byHimself = try await cluster.send(.DELETE, "/data/Users/\(bobID)", token: bobToken)
            #expect(byHimself.status == 200, "\(byHimself.text)")
            let inBulk = try await cluster.send(.DELETE, "/data/bulk/Users?\(Self.whereID(carlID))", key: .serverCode)
            #expect(inBulk.status == 200 && inBulk.text == "1", "\(inBulk.text)")
            for token in [annToken, bobToken, carlToken] {
                #expect(try await Self.tokenWorks(cluster, token) == false, "a deleted user's token still works")
            }
            let ghost = try await cluster.send(.POST, "/data/GhostWrites", #"{"x": 7}"#, token: annToken)
            #expect(ghost.status == 401, "\(ghost.text)")

            // No login with the old password, and a new account of the same address has no old role.
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
            #expect(login.status >= 400 && login.json["user-token"] == nil, "\(login.text)")
            let (_, newAnnToken) = try await cluster.account("ann@example.com")
            let roles = try await cluster.send(.GET, "/users/userroles", token: newAnnToken)
            #expect(roles.status == 200 && !roles.text.contains("moderator"), "\(roles.text)")
            let members = try await cluster.send(.GET, "/users/role/moderator", key: .serverCode)
            #expect(!members.text.contains(annID), "\(members.text)")

            // Users nobody deleted keep their sessions, until the table itself goes.
            #expect(try await cluster.send(.GET, "/users/userroles", token: danToken).status == 200)
            let dropped = try await cluster.send(.DELETE, "/data/Users/schema", key: .serverCode)
            #expect(dropped.status == 200, "\(dropped.text)")
            #expect(try await Self.tokenWorks(cluster, danToken) == false, "a dropped Users table left a session")
        }
    }

    /// The second probe's F5: a guest logs in without credentials, so its token listed every
    /// user's address that anonymous callers may not. Guests act as `GuestUser` too, denied Find
    /// on `Users` unless the app decides that role's cell; a converted guest is a user again.
    @Test func guestsCannotListUsersUnlessTheAppSaysSo() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.account("victim@example.com")
            let guest = try await cluster.send(.POST, "/users/register/guest")
            let token = try #require(guest.json["user-token"] as? String, "\(guest.text)")
            let guestID = try #require(guest.json["objectId"] as? String)
            let roles = try await cluster.send(.GET, "/users/userroles", token: token)
            #expect(roles.text.contains("GuestUser") && roles.text.contains("AuthenticatedUser"), "\(roles.text)")
            let listed = try await cluster.send(.GET, "/data/Users?props=email&pageSize=100", token: token)
            #expect(listed.status == 403 && !listed.text.contains("victim@example.com"), "\(listed.text)")
            let counted = try await cluster.send(.GET, "/data/Users/count", token: token)
            #expect(counted.status == 403, "\(counted.text)")
            // Other tables are a logged-in user's as before.
            #expect(try await cluster.send(.POST, "/data/GuestNotes", #"{"n": 1}"#, token: token).status == 200)

            // GuestUser cannot be given by hand: it follows from the session.
            let assigned = try await cluster.send(
                .POST, "/users/assignRole", #"{"user": "\#(guestID)", "roleName": "GuestUser"}"#, key: .serverCode)
            #expect(assigned.status >= 400, "\(assigned.text)")

            // The app may let guests find users, as it may anonymous callers.
            let grant = try await cluster.send(
                .PUT, "/data/Users/permissions/GRANT", #"{"permission": "FIND", "role": "GuestUser"}"#, key: .serverCode
            )
            #expect(grant.status == 200, "\(grant.text)")
            var allowed = try await cluster.send(.GET, "/data/Users/count", token: token)
            for _ in 0..<100 where allowed.status != 200 {
                try await Task.sleep(for: .milliseconds(100))
                allowed = try await cluster.send(.GET, "/data/Users/count", token: token)
            }
            #expect(allowed.status == 200, "\(allowed.text)")
            let deny = try await cluster.send(
                .PUT, "/data/Users/permissions/INHERIT", #"{"permission": "FIND", "role": "GuestUser"}"#,
                key: .serverCode)
            #expect(deny.status == 200, "\(deny.text)")

            // Converted, the guest is a registered user: its session lists users as theirs may.
            let converted = try await cluster.send(
                .POST, "/users/register",
                #"{"objectId": "\#(guestID)", "email": "was-guest@example.com", "password": "pw"}"#, token: token)
            #expect(converted.status == 200, "\(converted.text)")
            var after = try await cluster.send(.GET, "/users/userroles", token: token)
            for _ in 0..<100 where after.text.contains("GuestUser") {
                try await Task.sleep(for: .milliseconds(100))
                after = try await cluster.send(.GET, "/users/userroles", token: token)
            }
            #expect(after.status == 200 && !after.text.contains("GuestUser"), "\(after.text)")
            #expect(try await cluster.send(.GET, "/data/Users/count", token: token).status == 200)
        }
    }

    @Test func aResetLinkDiesWithTheAddressItWasMailedTo() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
                "BAAS_SMTP_FROM": "app@example.com", "BAAS_USERS_PUBLIC_URL": Self.publicURL,
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                let (annID, annToken) = try await cluster.account("ann@example.com")
                #expect(try await cluster.send(.GET, "/users/restorepassword/ann%40example.com").status == 200)
                let stale = try await Self.link(in: sink, cluster, count: 1)

                // The address changes (through the data API) and changes back (through the users API).
                let moved = try await cluster.send(
                    .PUT, "/data/Users/\(annID)", #"{"email": "ann.new@example.com"}"#, token: annToken)
                #expect(moved.status == 200 && moved.json["email"] as? String == "ann.new@example.com", "\(moved.text)")
                let back = try await cluster.send(
                    .PUT, "/users/\(annID)", #"{"email": "ann@example.com"}"#, token: annToken)
                #expect(back.status == 200, "\(back.text)")

                let json = [("Content-Type", "application/json")]
                let refused = try await HTTPTestClient.send(
                    .POST, stale, headers: json, body: Data(#"{"password": "stolen1"}"#.utf8))
                #expect(refused.status == 404 && refused.json["code"] as? Int == 3025, "\(refused.text)")
                let kept = try await cluster.send(
                    .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
                #expect(kept.json["user-token"] is String, "\(kept.text)")

                // A link mailed to the current address works.
                #expect(try await cluster.send(.GET, "/users/restorepassword/ann%40example.com").status == 200)
                let fresh = try await Self.link(in: sink, cluster, count: 2)
                let saved = try await HTTPTestClient.send(
                    .POST, fresh, headers: json, body: Data(#"{"password": "n3w1"}"#.utf8))
                #expect(saved.status == 200, "\(saved.text)")
                let login = try await cluster.send(
                    .POST, "/users/login", #"{"login": "ann@example.com", "password": "n3w1"}"#)
                #expect(login.json["user-token"] is String, "\(login.text)")
            }
        }
    }

    /// The link in the last of `count` received mails, pointed at the test's gateway.
    private static func link(in sink: SMTPSink, _ cluster: TestCluster, count: Int) async throws -> String {
        var messages: [[String: Any]] = []
        for _ in 0..<1_500 where messages.count < count {
            messages = try sink.messages()
            if messages.count < count { try await Task.sleep(for: .milliseconds(20)) }
        }
        let text = try #require(messages.last?["text"] as? String)
        let start = try #require(text.range(of: publicURL))
        return cluster.gatewayURL + text[start.upperBound...].prefix { !$0.isWhitespace }
    }
}
