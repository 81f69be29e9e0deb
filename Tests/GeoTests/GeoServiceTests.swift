import GeoService
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct GeoServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(GeoService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(GeoService.self)
    }

    @Test func servesItsManifestToTheGatewayOnly() async throws {
        try await BackendChecks.servesItsManifestToTheGatewayOnly(GeoService.self)
    }
}
