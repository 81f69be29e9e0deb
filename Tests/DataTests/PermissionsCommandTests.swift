import DataEngine
import DataService
import Foundation
import InternalProtocol
import Permissions
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import TestSupport
import Testing

/// `data-service permissions show`: the administrator reads the same JSON as the server-code-key
/// API, even when the app's rules would hide it from every key.
@Suite(.timeLimit(.minutes(20))) struct PermissionsCommandTests {
    @Test func showsTableGlobalAndObjectPermissions() async throws {
        try await TestDatabase.with { configuration in
            let appID = UUID().uuidString
            let logger = TestDatabase.logger
            let objectID = try await PostgresClient.with(configuration, logger: logger) { client in
                try await MigrationRunner(owner: "data", migrations: CatalogMigrations.all).apply(
                    on: client, logger: logger)
                let engine = DataEngine(database: client, logger: logger)
                let server = Identity.anonymous(appId: appID, keyKind: .serverCode)
                let created = try await engine.create(
                    "Doc", object: try #require(try JSONParser.parse(#"{"n": 1}"#).object), identity: server,
                    logger: logger)
                let id = try #require(try JSONParser.parse(created).object?["objectId"]?.string)
                for (table, principal) in [("Doc", Principal.user("U1")), (nil, .role("ServerCodeUser"))] {
                    try await engine.setRulePermission(
                        PermissionChange(decision: .deny, operation: .permission, principal: principal), table: table,
                        identity: server, logger: logger)
                }
                try await engine.setOwnerPolicy(
                    .grant, operation: .find, table: "Doc", identity: server, logger: logger)
                // The deny above leaves the server-code key without the Permission right: set the ACL in SQL.
                _ = try await client.query(
                    """
                    INSERT INTO data.object_acl (app_id, table_name, object_id, operation, principal_kind, principal, decision)
                    VALUES (\(appID), 'doc', \(id), 'Update', 'role', 'Editors', 'DENY')
                    """, logger: logger
                ).collect()
                return id
            }
            let table = try await PermissionsCommand.run(
                ["show", appID, "Doc"], database: configuration, logger: logger)
            #expect(
                table == #"{"permissions":[{"user":"U1","permission":"PERMISSION","access":"DENY"}],"#
                    + #""owner":[{"permission":"FIND","access":"GRANT"}]}"#)
            let global = try await PermissionsCommand.run(
                ["show", appID, "*"], database: configuration, logger: logger)
            #expect(
                global
                    == #"{"permissions":[{"role":"ServerCodeUser","permission":"PERMISSION","access":"DENY"}],"owner":[]}"#
            )
            let acl = try await PermissionsCommand.run(
                ["show", appID, "Doc", objectID], database: configuration, logger: logger)
            #expect(acl == #"[{"role":"Editors","permission":"UPDATE","access":"DENY"}]"#)
            for arguments in [["show"], ["show", appID], ["grant", appID, "Doc"]] {
                await #expect(throws: UsageError.self, "\(arguments)") {
                    _ = try await PermissionsCommand.run(arguments, database: configuration, logger: logger)
                }
            }
            await #expect(throws: ErrorEnvelope.self) {
                _ = try await PermissionsCommand.run(["show", appID, "Nope"], database: configuration, logger: logger)
            }
        }
    }
}
