import GatewayService
import InternalProtocol
import Testing

@Suite struct PublicRouteTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let path: String
        let target: PublicRoute.Target?
        let resource: String
        var testDescription: String { path }
    }

    static let cases: [Case] = [
        .init(path: "/A/K/info", target: .gatewayInfo, resource: "info"),
        .init(path: "/A/K/users/login", target: .backend(.users), resource: "users/login"),
        .init(path: "/A/account/reset-password/T", target: .backend(.users), resource: "account/reset-password/T"),
        .init(path: "/A/K/data/Person", target: .backend(.data), resource: "data/Person"),
        .init(path: "/A/K/data/Person/ID", target: .backend(.data), resource: "data/Person/ID"),
        .init(path: "/A/K/data/Person/ID/friends", target: .backend(.relations), resource: "data/Person/ID/friends"),
        .init(path: "/A/K/data/Person/ID/friends/load", target: .backend(.relations), resource: "data/Person/ID/friends/load"),
        .init(path: "/A/K/data/bulk/Person/delete", target: .backend(.data), resource: "data/bulk/Person/delete"),
        .init(path: "/A/K/data/Person/permissions/GRANT", target: .backend(.data), resource: "data/Person/permissions/GRANT"),
        .init(path: "/A/K/data/Person/permissions/GRANT/ID", target: .backend(.data), resource: "data/Person/permissions/GRANT/ID"),
        .init(path: "/A/K/data/data-grouping/Person/x", target: .backend(.data), resource: "data/data-grouping/Person/x"),
        .init(path: "/A/K/transaction/unit-of-work", target: .backend(.data), resource: "transaction/unit-of-work"),
        .init(path: "/A/K/messaging/default", target: .backend(.messaging), resource: "messaging/default"),
        .init(path: "/A/K/emailtemplate/send", target: .backend(.messaging), resource: "emailtemplate/send"),
        .init(path: "/A/K/files/a/b.txt", target: .backend(.files), resource: "files/a/b.txt"),
        .init(path: "/A/K/geo/points", target: .backend(.geo), resource: "geo/points"),
        .init(path: "/A/K/geo/points/", target: .backend(.geo), resource: "geo/points"),
        .init(path: "/A/K/counters/x", target: nil, resource: "counters/x"),
        .init(path: "/A/K/info/more", target: nil, resource: "info/more"),
        .init(path: "/A/K", target: nil, resource: ""),
        .init(path: "/api/data/Person", target: .backend(.data), resource: "data/Person"),
        .init(path: "/api/info", target: .gatewayInfo, resource: "info"),
    ]

    @Test(arguments: cases) func routes(_ route: Case) throws {
        let parsed = try #require(PublicRoute(path: route.path))
        #expect(parsed.target == route.target)
        #expect(parsed.resourcePath == route.resource)
    }

    @Test func credentialsComeFromThePathOrHeaders() throws {
        #expect(try #require(PublicRoute(path: "/A/K/info")).credentials == .path(appID: "A", apiKey: "K"))
        #expect(try #require(PublicRoute(path: "/A")).credentials == .path(appID: "A", apiKey: nil))
        #expect(try #require(PublicRoute(path: "/A//info")).credentials == .path(appID: "A", apiKey: nil))
        #expect(try #require(PublicRoute(path: "/api/info")).credentials == .headers)
        // Emailed links carry no key; only the account pages are reachable that way.
        #expect(try #require(PublicRoute(path: "/A/account/confirm-email/T")).credentials == .appOnly(appID: "A"))
        #expect(PublicRoute(path: "/A/account")?.target == nil)
    }

    @Test func rootAndBareApiAreTheBanner() {
        #expect(PublicRoute(path: "/") == nil)
        #expect(PublicRoute(path: "/api") == nil)
        #expect(PublicRoute(path: "/api/") == nil)
    }

    @Test func theClientAddressComesFromTrustedProxiesOnly() {
        let trusted: Set<String> = ["10.0.0.1", "10.0.0.2"]
        #expect(ClientAddress.resolve(peer: "203.0.113.9", forwardedFor: "1.2.3.4", trusted: trusted) == "203.0.113.9")
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: "1.2.3.4", trusted: trusted) == "1.2.3.4")
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: "6.6.6.6, 1.2.3.4, 10.0.0.2", trusted: trusted) == "1.2.3.4")
        #expect(ClientAddress.resolve(peer: "10.0.0.1", forwardedFor: nil, trusted: trusted) == "10.0.0.1")
    }
}
