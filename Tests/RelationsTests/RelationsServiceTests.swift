import RelationsService
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct RelationsServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(RelationsService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(RelationsService.self)
    }

    @Test func servesItsManifestToTheGatewayOnly() async throws {
        try await BackendChecks.servesItsManifestToTheGatewayOnly(RelationsService.self)
    }
}
