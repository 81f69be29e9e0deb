import FilesService
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(20))) struct FilesServiceTests {
    @Test func readyWithItsDatabase() async throws {
        try await BackendChecks.readyWithDatabase(FilesService.self)
    }

    @Test func notReadyWithoutItsDatabase() async throws {
        try await BackendChecks.notReadyWithoutDatabase(FilesService.self)
    }

    @Test func servesItsManifestToTheGatewayOnly() async throws {
        try await BackendChecks.servesItsManifestToTheGatewayOnly(FilesService.self)
    }
}
