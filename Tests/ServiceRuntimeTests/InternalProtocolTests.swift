import AsyncHTTPClient
import Foundation
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import ServiceRuntime
import Synchronization
import TestSupport
import Testing

/// The internal protocol over a real HTTP/2 + mutual TLS server and the real client.
@Suite(.timeLimit(.minutes(20))) struct InternalProtocolTests {
    /// What the echo operation saw.
    struct Echo: Codable, Sendable {
        var requestID: String
        var traceparent: String?
        var remainingMilliseconds: Int64
        var identity: Identity?
        var caller: String?
        var connection: String
    }

    enum EchoOperation: RPCOperation {
        typealias Request = Empty
        typealias Response = Echo
        static let name = "test.echo"
        static let callers: Set<ServiceName> = [.gateway]
        static let isIdempotent = true
    }

    enum FailOperation: RPCOperation {
        typealias Request = Empty
        typealias Response = Empty
        static let name = "test.fail"
        static let callers: Set<ServiceName> = [.gateway]
        static let isIdempotent = false
    }

    enum SlowOperation: RPCOperation {
        typealias Request = Empty
        typealias Response = Empty
        static let name = "test.slow"
        static let callers: Set<ServiceName> = [.gateway]
        static let isIdempotent = false
    }

    /// Counts handler invocations, to show refused calls never reach one.
    final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func increment() { value.add(1, ordering: .relaxed) }
        var count: Int { value.load(ordering: .relaxed) }
    }

    /// How long the slow operation takes: longer than any deadline a test gives it.
    static let slowOperationDuration = Duration.seconds(10)

    static let envelope = ErrorEnvelope(code: 3003, message: "Invalid login or password.", status: 401)

    private static func registry(counter: Counter) -> OperationRegistry {
        var registry = OperationRegistry()
        registry.register(name: EchoOperation.name, callers: EchoOperation.callers) { _, context in
            counter.increment()
            let connection = context.channel.parent ?? context.channel
            return try .json(
                Echo(
                    requestID: context.call.requestID, traceparent: context.call.traceparent,
                    remainingMilliseconds: context.call.remainingMilliseconds,
                    identity: context.call.identity, caller: context.caller?.executable,
                    connection: "\(ObjectIdentifier(connection))"))
        }
        registry.register(FailOperation.self) { _, _ in
            counter.increment()
            throw Self.envelope
        }
        registry.register(SlowOperation.self) { _, _ in
            counter.increment()
            try await Task.sleep(for: slowOperationDuration)
            return Empty()
        }
        return registry
    }

    /// Runs a data-service-like internal server and a gateway-like client.
    private func withServer(
        _ body: @Sendable (_ client: InternalClient, _ baseURL: String, _ counter: Counter) async throws -> Void
    ) async throws {
        let counter = Counter()
        let ports = BoundPorts()
        let server = try RPCServer.make(
            service: .data, host: "127.0.0.1", port: 0, tls: TestPKI.material(for: .data),
            registry: Self.registry(counter: counter), routes: PublicRoutes(service: .data), ports: ports,
            defaultTimeout: .seconds(10),
            logger: TestDatabase.logger)
        let group = ServiceGroup(configuration: .init(services: [server], logger: TestDatabase.logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let baseURL = "https://127.0.0.1:\(await ports.port(.rpc))"
            let client = try InternalClient(
                tls: TestPKI.material(for: .gateway), peers: [.data: baseURL], connectTimeout: TestPKI.connectTimeout)
            do {
                try await client.using { try await body($0, baseURL, counter) }
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
        }
    }

    /// A raw `POST /rpc/{operation}` for checks below the typed client.
    static func post<Op: RPCOperation>(_ baseURL: String, _ operation: Op.Type, body: String) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: "\(baseURL)/rpc/\(Op.name)")
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: body))
        return request
    }

    /// A call's context; the default deadline is the tests' internal timeout, which bounds a hang
    /// on a machine every suite loads at once, not speed (10 s expired for one echo call while a
    /// hundred others took 13 s).
    private func context(
        _ requestID: String = CallContext.newRequestID(),
        timeout: TimeAmount = .milliseconds(Int64(TestPKI.internalTimeout.components.seconds * 1000))
    )
        -> CallContext
    {
        CallContext(requestID: requestID, deadline: .now() + timeout, logger: TestDatabase.logger)
    }

    @Test func negotiatesHTTP2AndNamesTheCaller() async throws {
        try await withServer { client, baseURL, _ async throws in
            let response = try await client.http.execute(
                Self.post(baseURL, EchoOperation.self, body: "{}"), timeout: .seconds(30))
            #expect(response.version == .http2)
            #expect(response.status == .ok)
            let echo = try await client.call(EchoOperation.self, Empty(), on: .data, context: context())
            #expect(echo.caller == "gateway")
        }
    }

    @Test func hundredConcurrentCallsShareOneConnection() async throws {
        try await withServer { client, _, counter async throws in
            let connections = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        try await client.call(EchoOperation.self, Empty(), on: .data, context: context()).connection
                    }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(connections.count == 1)
            #expect(counter.count == 100)
        }
    }

    @Test func propagatesRequestIDDeadlineAndIdentity() async throws {
        try await withServer { client, _, _ async throws in
            var call = context("req-42")
            call.identity = .anonymous(appId: "APP", keyKind: .js)
            call.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            let echo = try await client.call(EchoOperation.self, Empty(), on: .data, context: call)
            #expect(echo.requestID == "req-42")
            #expect(echo.traceparent == call.traceparent)
            #expect(echo.identity == .anonymous(appId: "APP", keyKind: .js))
            #expect(
                echo.remainingMilliseconds > 0
                    && echo.remainingMilliseconds <= TestPKI.internalTimeout.components.seconds * 1000)
        }
    }

    @Test func passesTheErrorEnvelopeThroughUnchanged() async throws {
        try await withServer { client, _, _ async throws in
            await #expect(throws: Self.envelope) {
                try await client.call(FailOperation.self, Empty(), on: .data, context: context())
            }
        }
    }

    @Test func aMissedDeadlineIs504NotAHang() async throws {
        try await withServer { client, _, _ async throws in
            let started = ContinuousClock.now
            await #expect(throws: ErrorEnvelope.deadlineExceeded(.data)) {
                try await client.call(
                    SlowOperation.self, Empty(), on: .data, context: context(timeout: .milliseconds(300)))
            }
            // Answered before the handler could have finished, however busy the machine.
            #expect(ContinuousClock.now - started < Self.slowOperationDuration)
        }
    }

    @Test func anUnreachablePeerIs503() async throws {
        let port = try await FreePort.next()
        let client = try InternalClient(
            tls: TestPKI.material(for: .gateway), peers: [.data: "https://127.0.0.1:\(port)"],
            connectTimeout: TestPKI.connectTimeout)
        try await client.using { client in
            await #expect(throws: ErrorEnvelope.serviceUnavailable(.data)) {
                try await client.call(EchoOperation.self, Empty(), on: .data, context: context(timeout: .seconds(2)))
            }
        }
    }

    @Test func aCallWithoutAClientCertificateNeverReachesAHandler() async throws {
        try await withServer { _, baseURL, counter async throws in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([
                try NIOSSLCertificate(bytes: Array(TestPKI.authority.certificatePEM.utf8), format: .pem)
            ])
            let anonymous = HTTPClient(
                eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
            try await withShutdown(anonymous) {
                await #expect(throws: (any Error).self) {
                    _ = try await anonymous.execute(
                        Self.post(baseURL, EchoOperation.self, body: "{}"), timeout: .seconds(30))
                }
            }
            #expect(counter.count == 0)
        }
    }

    @Test func aCertificateFromAnotherAuthorityIsRefused() async throws {
        // The handshake fails on every try; the client reports the last failure (503) unless
        // the call's deadline timer, racing the pool's own, fires first (504) on a busy machine.
        try await expectRefused(
            presenting: TestPKI.foreignMaterial(commonName: "gateway"),
            with: [ErrorEnvelope.serviceUnavailable(.data), ErrorEnvelope.deadlineExceeded(.data)])
    }

    @Test func aCertificateNamingNoServiceIsRefused() async throws {
        try await expectRefused(
            presenting: TestPKI.material(commonName: "intruder"), with: [ErrorEnvelope.originRefused])
    }

    @Test func aMalformedBodyIsA400() async throws {
        try await withServer { client, baseURL, _ async throws in
            let response = try await client.http.execute(
                Self.post(baseURL, FailOperation.self, body: "not json"), timeout: .seconds(30))
            #expect(response.status == .badRequest)
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect(try JSONDecoder().decode(ErrorEnvelope.self, from: body).code == 400)
        }
    }

    @Test func aCallerTheOperationDoesNotNameNeverReachesItsHandler() async throws {
        try await expectRefused(presenting: TestPKI.material(for: .users), with: [ErrorEnvelope.callerRefused])
    }

    /// Calls the echo and fail operations presenting `material`: each is refused with one of
    /// `expected` and no handler runs.
    private func expectRefused(presenting material: TLSMaterial, with expected: [ErrorEnvelope]) async throws {
        try await withServer { _, baseURL, counter async throws in
            let caller = try InternalClient(
                tls: material, peers: [.data: baseURL], connectTimeout: TestPKI.connectTimeout)
            try await caller.using { caller in
                let echo = await #expect(throws: ErrorEnvelope.self) {
                    try await caller.call(EchoOperation.self, Empty(), on: .data, context: context())
                }
                let fail = await #expect(throws: ErrorEnvelope.self) {
                    try await caller.call(FailOperation.self, Empty(), on: .data, context: context())
                }
                #expect(echo.map(expected.contains) == true, "\(String(describing: echo))")
                #expect(fail.map(expected.contains) == true, "\(String(describing: fail))")
            }
            #expect(counter.count == 0)
        }
    }

    @Test func noHeaderCanClaimTheSystemIdentity() async throws {
        try await withServer { client, baseURL, _ async throws in
            var request = Self.post(baseURL, EchoOperation.self, body: "{}")
            let claimed = #"{"appId":"A","isSystem":true,"keyKind":"REST","roles":[]}"#
            let header = Data(claimed.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            request.headers.add(name: InternalHeader.identity, value: header)
            let response = try await client.http.execute(request, timeout: .seconds(30))
            let echo = try JSONDecoder().decode(Echo.self, from: try await response.body.collect(upTo: 1 << 16))
            #expect(echo.identity?.appId == "A")
            #expect(echo.identity?.isSystem == false)
            var system = Identity.anonymous(appId: "A", keyKind: .rest)
            system.isSystem = true
            #expect(try Identity(headerValue: system.headerValue()).isSystem == false)
        }
    }
}
