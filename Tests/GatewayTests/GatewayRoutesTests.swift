import DataService
import Foundation
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOEmbedded
import Synchronization
import TestSupport
import Testing

@testable import GatewayService

/// The gateway routes by the services' manifests with Hummingbird's router: which service, which
/// credentials, which permission — decided by what the services declare, never by a copy.
@Suite(.timeLimit(.minutes(20))) struct GatewayRoutesTests {
    /// What a route handler saw.
    struct Match: Equatable, Sendable {
        var service: ServiceName
        var path: String
        var credentials: Credentials
        var resource: String
        var prefix: String
        var operation: String?
        var container: String?
    }

    /// Routes built from `manifests`, and a way to ask which route a request reaches.
    final class Recorder: Sendable {
        final class Log: Sendable {
            let items = Mutex<[Match]>([])
        }
        let log = Log()
        let routes: GatewayRoutes

        init(_ manifests: [RouteManifest]) {
            let log = self.log
            routes = GatewayRoutes(services: manifests.map(\.service)) { route, service in
                { _, context, address in
                    let container = route.permission.flatMap { context.decodedParameter($0.containerParameter) }
                    let match = Match(
                        service: service, path: route.path, credentials: address.credentials,
                        resource: address.resource,
                        prefix: address.prefix,
                        operation: route.permission?.operation, container: container)
                    log.items.withLock { $0.append(match) }
                    return Response(status: .ok)
                }
            }
            for manifest in manifests { routes.update(manifest) }
        }

        /// The route `method path` reaches, or the envelope it is refused with.
        func match(_ method: HTTPRequest.Method, _ path: String) async throws -> Result<Match, ErrorEnvelope> {
            let request = Request(
                head: HTTPRequest(method: method, scheme: "http", authority: "x", path: path),
                body: RequestBody(buffer: ByteBuffer()))
            let context = GatewayRequestContext(
                source: .init(channel: EmbeddedChannel(), logger: Logger(label: "test")))
            log.items.withLock { $0.removeAll() }
            do {
                _ = try await routes.respond(to: request, context: context)
            } catch let envelope as ErrorEnvelope {
                return .failure(envelope)
            }
            return .success(try #require(log.items.withLock { $0.first }))
        }
    }

    static let testManifest = RouteManifest(
        service: .files,
        routes: [
            RouteDescriptor(
                method: "PUT", path: "files/:directory/**",
                permission: RoutePermission(operation: "Upload", containerParameter: "directory"),
                bodyLimit: 1 << 40, transfer: .streamed, idleTimeoutMilliseconds: 30_000),
            RouteDescriptor(method: "GET", path: "files/pages/:name", bodyLimit: 0, keyless: true),
        ])

    @Test(.tags(.fast)) func aRouteAServiceDeclaresIsRoutedWithNoGatewayChange() async throws {
        let recorder = Recorder([Self.testManifest])
        let upload = try await recorder.match(.put, "/APP/KEY/files/My%20Docs/a/b.txt").get()
        #expect(
            upload
                == Match(
                    service: .files, path: "files/:directory/**", credentials: .path,
                    resource: "files/My%20Docs/a/b.txt", prefix: "/APP/KEY", operation: "Upload", container: "My Docs"))
        let api = try await recorder.match(.put, "/api/files/d/x").get()
        #expect(api.credentials == .headers && api.prefix == "/api" && api.resource == "files/d/x")
        let keyless = try await recorder.match(.get, "/APP/files/pages/home").get()
        #expect(keyless.credentials == .appOnly && keyless.prefix == "/APP" && keyless.resource == "files/pages/home")
        #expect(try await recorder.match(.get, "/APP/KEY/files/pages/home").get().credentials == .path)
        // Not keyless: without a key the path does not exist.
        #expect(
            try await recorder.match(.put, "/APP/files/d/x")
                == .failure(.endpointNotFound(method: "PUT", path: "APP/files/d/x")))
        #expect(
            try await recorder.match(.get, "/APP/KEY/geo/points")
                == .failure(.endpointNotFound(method: "GET", path: "APP/KEY/geo/points")))
    }

    /// A route served at the app's root is addressed by its own path, under the app's prefix.
    @Test(.tags(.fast)) func appRootRoutesAreAddressedByTheirOwnPath() async throws {
        let manifest = RouteManifest(
            service: .messaging,
            routes: [RouteDescriptor(method: "GET", path: "rt/poll", bodyLimit: 0, atAppRoot: true)])
        let recorder = Recorder([manifest])
        let poll = try await recorder.match(.get, "/APP/?EIO=4&transport=polling").get()
        #expect(poll.credentials == .query && poll.resource == "rt/poll" && poll.prefix == "/APP")
        #expect(try await recorder.match(.get, "/APP").get().prefix == "/APP")
    }

    /// The one split of a public path: prefix, resource, and the app and key it names.
    @Test(.tags(.fast)) func aPathIsSplitOnceIntoPrefixResourceAppAndKey() {
        let path = PublicAddress(path: "/My%20App/K%2F1/data/T/1", credentials: .path)
        #expect(path.prefix == "/My%20App/K%2F1" && path.resource == "data/T/1")
        #expect(path.appID == "My App" && path.apiKey == "K/1")
        let api = PublicAddress(path: "/api/data/T", credentials: .headers)
        #expect(api.prefix == "/api" && api.resource == "data/T" && api.appID == nil && api.apiKey == nil)
        let keyless = PublicAddress(path: "/APP/files/x", credentials: .appOnly)
        #expect(keyless.appID == "APP" && keyless.apiKey == nil && keyless.resource == "files/x")
        let root = PublicAddress(path: "/APP/", credentials: .query, rootRoute: "rt/socket")
        #expect(root.prefix == "/APP" && root.resource == "rt/socket" && root.appID == "APP")
        #expect(PublicAddress(path: "/%ZZ/K/data", credentials: .path).appID == nil, "a malformed escape names no app")
        #expect(PublicAddress(path: "//K/data", credentials: .path).appID == nil)
        let unmatched = PublicAddress(unmatched: "/api/nowhere/x")
        #expect(unmatched.credentials == .headers && unmatched.resource == "nowhere/x")
        #expect(PublicAddress(unmatched: "/A/K/nowhere").resource == "nowhere")
        #expect(PublicAddress(unmatched: "/").resource == "")
    }

    @Test(.tags(.fast)) func untilEveryServiceHasAnsweredUnknownPathsAre503() async throws {
        let routes = GatewayRoutes(services: [.files, .geo]) { _, _ in { _, _, _ in Response(status: .ok) } }
        #expect(routes.missing == [.files, .geo])
        routes.update(Self.testManifest)
        #expect(routes.missing == [.geo])
    }

    /// Data-service's own manifest, as a running data-service answers it, classifies each route
    /// by its one operation on its table.
    @Test func dataRoutesAreClassifiedByDataServicesManifest() async throws {
        let manifest = try await TestDatabase.with { database in
            try await BackendChecks.manifest(of: DataService.self, database: database)
        }
        let recorder = Recorder([manifest])
        let cases: [(HTTPRequest.Method, String, String?)] = [
            (.get, "data/Doc", "Find"), (.get, "data/Doc/count", "Find"), (.post, "data/Doc/count", "Find"),
            (.post, "data/Doc/find", "Find"), (.get, "data/Doc/first", "Find"), (.get, "data/Doc/last", "Find"),
            (.get, "data/Doc/ABC-1", "Find"), (.get, "data/Doc/pk", "Find"), (.post, "data/Doc/bql", "Find"),
            (.post, "data/Doc/bql/refresh", "Find"), (.post, "data/Doc/bql/remove", "Remove"),
            (.post, "data/Doc", "Create"), (.put, "data/Doc/ABC-1", "Update"), (.delete, "data/Doc/ABC-1", "Remove"),
            (.delete, "data/Doc", "Remove"), (.post, "data/bulk/Doc", "Create"), (.put, "data/bulk/Doc", "Update"),
            (.delete, "data/bulk/Doc", "Remove"), (.post, "data/bulk/Doc/delete", "Remove"),
            (.put, "data/Doc", nil), (.put, "data/Doc/upsert", nil), (.put, "data/bulkupsert/Doc", nil),
            (.get, "data/Doc/properties", nil), (.put, "data/Doc/permissions/GRANT", nil),
            (.get, "data/_settings", nil),
            (.post, "transaction/unit-of-work", nil),
        ]
        for (method, path, operation) in cases {
            let match = try await recorder.match(method, "/APP/KEY/" + path).get()
            #expect(match.operation == operation, "\(method) \(path)")
            #expect(match.container == (operation == nil ? nil : "Doc"), "\(method) \(path)")
        }
        let spaced = try await recorder.match(.get, "/APP/KEY/data/My%20Table").get()
        #expect(spaced.container == "My Table")
        // Each is decided by the data tables' rules, which the gateway keeps: its manifest says so.
        #expect(manifest.routes.compactMap(\.permission).allSatisfy { $0.rules == .dataTables })
        #expect(Self.testManifest.routes.compactMap(\.permission).allSatisfy { $0.rules == nil })
        let changes = manifest.routes.filter(\.changesPermissions).map(\.path)
        #expect(changes.count == 3 && changes.allSatisfy { $0.contains("/permissions/") })
        #expect(
            try await recorder.match(.patch, "/APP/KEY/data/Doc/ABC-1")
                == .failure(.endpointNotFound(method: "PATCH", path: "APP/KEY/data/Doc/ABC-1")))
    }
}
