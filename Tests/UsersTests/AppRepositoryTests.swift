import Foundation
import InternalProtocol
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import TestSupport
import Testing
import UsersService

@Suite(.timeLimit(.minutes(20))) struct AppRepositoryTests {
    static var backendlessID: Regex<Substring> {
        /^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/
    }
    let logger = TestDatabase.logger

    private func withApps(_ body: @Sendable (AppRepository, PostgresClient) async throws -> Void) async throws {
        try await TestDatabase.with { database async throws in
            try await PostgresClient.with(database, logger: logger) { client async throws in
                try await MigrationRunner(owner: "users", migrations: UsersService.migrations).apply(
                    on: client, logger: logger)
                try await body(AppRepository(database: client), client)
            }
        }
    }

    @Test func createsAnAppWithOneBackendlessKeyPerKind() async throws {
        try await withApps { apps, _ async throws in
            let app = try await apps.create(name: "shop", logger: logger)
            #expect(app.id.wholeMatch(of: Self.backendlessID) != nil)
            #expect(Set(app.keys.keys) == Set(APIKeyKind.allCases))
            #expect(Set(app.keys.values).count == APIKeyKind.allCases.count)
            #expect(app.keys.values.allSatisfy { $0.wholeMatch(of: Self.backendlessID) != nil })
        }
    }

    @Test func resolvesEveryKeyToItsKind() async throws {
        try await withApps { apps, _ async throws in
            let app = try await apps.create(name: "shop", logger: logger)
            for (kind, key) in app.keys {
                let resolved = try await apps.resolve(appId: app.id, apiKey: key, logger: logger)
                #expect(resolved == .init(appId: app.id, appName: "shop", keyKind: kind))
            }
            let lowerCase = try await apps.resolve(
                appId: app.id.lowercased(), apiKey: app.keys[.rest]!.lowercased(), logger: logger)
            #expect(lowerCase.keyKind == .rest && lowerCase.appId == app.id)
        }
    }

    @Test func rejectsWrongKeysAndAppsWith2002() async throws {
        try await withApps { apps, _ async throws in
            let app = try await apps.create(name: "shop", logger: logger)
            let other = try await apps.create(name: "other", logger: logger)
            let attempts = [
                (app.id, UUID().uuidString), (app.id, other.keys[.rest]!), (UUID().uuidString, app.keys[.rest]!),
                ("not-a-uuid", app.keys[.rest]!), (app.id, ""), (app.id, "' OR '1'='1"),
            ]
            for (appID, key) in attempts {
                await #expect(throws: ErrorEnvelope.invalidApplicationInfo) {
                    try await apps.resolve(appId: appID, apiKey: key, logger: logger)
                }
            }
        }
    }

    @Test func storesOnlyHashesOfKeys() async throws {
        try await withApps { apps, client async throws in
            let app = try await apps.create(name: "shop", logger: logger)
            let rows = try await client.query(
                "SELECT row_to_json(k)::text FROM platform.api_keys k", logger: logger)
            var dump = ""
            for try await row in rows.decode(String.self) { dump += row }
            #expect(!dump.isEmpty)
            for key in app.keys.values {
                #expect(!dump.localizedCaseInsensitiveContains(key))
                #expect(!dump.localizedCaseInsensitiveContains(key.replacingOccurrences(of: "-", with: "")))
            }
        }
    }

    @Test func rotatingAKeyRetiresTheOldOne() async throws {
        try await withApps { apps, _ async throws in
            let app = try await apps.create(name: "shop", logger: logger)
            let newKey = try await apps.rotateKey(app: "shop", kind: .js, logger: logger)
            #expect(newKey != app.keys[.js])
            #expect(try await apps.resolve(appId: app.id, apiKey: newKey, logger: logger).keyKind == .js)
            await #expect(throws: ErrorEnvelope.invalidApplicationInfo) {
                try await apps.resolve(appId: app.id, apiKey: app.keys[.js]!, logger: logger)
            }
            #expect(try await apps.resolve(appId: app.id, apiKey: app.keys[.rest]!, logger: logger).keyKind == .rest)
            await #expect(throws: AppAdminError.unknownApp("nope")) {
                try await apps.rotateKey(app: "nope", kind: .js, logger: logger)
            }
        }
    }

    @Test func refusesADuplicateName() async throws {
        try await withApps { apps, _ async throws in
            _ = try await apps.create(name: "shop", logger: logger)
            await #expect(throws: AppAdminError.nameTaken("shop")) {
                try await apps.create(name: "shop", logger: logger)
            }
            #expect(try await apps.list(logger: logger).map(\.name) == ["shop"])
        }
    }

    @Test func adminCommandCreatesListsAndRotates() async throws {
        try await TestDatabase.with { database async throws in
            let created = try await AppsCommand.run(["create", "demo app"], database: database, logger: logger)
            let lines = created.split(separator: "\n").map(String.init)
            #expect(lines.first == "BAAS_APP_NAME='demo app'")
            let values = Dictionary(
                uniqueKeysWithValues: lines.dropFirst().map {
                    let parts = $0.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), String(parts[1]))
                })
            #expect(
                Set(values.keys) == [
                    "BAAS_APP_ID", "BAAS_REST_KEY", "BAAS_JS_KEY", "BAAS_ANDROID_KEY", "BAAS_IOS_KEY",
                    "BAAS_DOTNET_KEY",
                    "BAAS_AS_KEY", "BAAS_SERVER_KEY",
                ])
            let listed = try await AppsCommand.run(["list"], database: database, logger: logger)
            #expect(listed.hasPrefix("\(values["BAAS_APP_ID"]!)  demo app  "))
            let rotated = try await AppsCommand.run(
                ["rotate-key", "demo app", "server_code"], database: database, logger: logger)
            #expect(rotated.hasPrefix("BAAS_APP_ID=\(values["BAAS_APP_ID"]!)\nBAAS_SERVER_KEY="))
            #expect(!rotated.contains(values["BAAS_SERVER_KEY"]!))
            await #expect(throws: UsageError.self) {
                try await AppsCommand.run(["frobnicate"], database: database, logger: logger)
            }
            await #expect(throws: UsageError.self) {
                try await AppsCommand.run(["rotate-key", "demo app", "FAX"], database: database, logger: logger)
            }
        }
    }

    @Test func adminCommandManagesCustomRoles() async throws {
        try await TestDatabase.with { database async throws in
            _ = try await AppsCommand.run(["create", "shop"], database: database, logger: logger)
            #expect(
                try await RolesCommand.run(["create", "shop", "Editors"], database: database, logger: logger)
                    == "created Editors")
            #expect(
                try await RolesCommand.run(["create", "shop", "Editors"], database: database, logger: logger)
                    == "Editors exists")
            _ = try await RolesCommand.run(["create", "shop", "Admins"], database: database, logger: logger)
            #expect(
                try await RolesCommand.run(["list", "shop"], database: database, logger: logger) == "Admins\nEditors")
            #expect(
                try await RolesCommand.run(["delete", "shop", "Admins"], database: database, logger: logger)
                    == "deleted Admins")
            #expect(try await RolesCommand.run(["list", "shop"], database: database, logger: logger) == "Editors")
            await #expect(throws: ErrorEnvelope.self) {
                try await RolesCommand.run(["delete", "shop", "Admins"], database: database, logger: logger)
            }
            await #expect(throws: ErrorEnvelope.self) {
                try await RolesCommand.run(["create", "shop", "RestUser"], database: database, logger: logger)
            }
            await #expect(throws: UsageError.self) {
                try await RolesCommand.run(["list"], database: database, logger: logger)
            }
            await #expect(throws: AppAdminError.self) {
                try await RolesCommand.run(["list", "nope"], database: database, logger: logger)
            }
        }
    }
}
