import { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { AuthenticationError, type TokenVerifier } from '../auth/verify-token.ts';
import type { Viewer } from '../auth/viewer.ts';
import type { GraphQLContext } from '../context.ts';
import type { Logger } from '../lib/logger.ts';

/** The client token check every transport shares (interface specification, authentication). */
export interface ViewerAuth {
  /**
   * The viewer of an `Authorization` header value (HTTP, SSE); null when none is sent.
   * @throws GraphQLError with the token's code (`invalid-token`, `token-expired`) and `http.status`
   *   401 for a bad token, after one `info` line that never quotes the token.
   */
  fromHeader(header: string | null | undefined): Promise<Viewer | null>;
  /**
   * The viewer of an `Authorization` header value when it is known without verifying anything now
   * (no header: null; a token verified before and not past its `exp`: its viewer); undefined when
   * {@link ViewerAuth.fromHeader} must decide.
   */
  knownViewer(header: string | null | undefined): Viewer | null | undefined;
  /**
   * The viewer of a graphql-ws `connection_init` (`connectionParams.authorization`); null when the
   * connection is refused (no or bad token, logged once), which graphql-ws answers with close 4403.
   */
  fromConnectionParams(params: Readonly<Record<string, unknown>> | undefined): Promise<Viewer | null>;
}

/** {@link ViewerAuth} over `verifyToken` (src/auth/verify-token.ts), logging refusals to `logger`. */
export function createViewerAuth(verifyToken: TokenVerifier, logger: Logger): ViewerAuth {
  return {
    knownViewer: (header) => verifyToken.remembered?.(header ?? undefined),
    async fromHeader(header) {
      try {
        return await verifyToken(header ?? undefined);
      } catch (error) {
        if (!(error instanceof AuthenticationError)) throw error;
        // The refusal is the operator's first clue when a client "just spins"; the message never
        // quotes the token.
        logger.info({ code: error.code, reason: error.message }, 'request refused: bad client token');
        throw new GraphQLError(error.message, { extensions: { code: error.code, http: { status: 401 } } });
      }
    },
    async fromConnectionParams(params) {
      const authorization = params?.authorization;
      let viewer: Viewer | null;
      try {
        viewer = await verifyToken(typeof authorization === 'string' ? authorization : undefined);
      } catch (error) {
        if (!(error instanceof AuthenticationError)) throw error;
        logger.info(
          { code: error.code, reason: error.message },
          'graphql-ws connection refused (4403): bad client token',
        );
        return null;
      }
      if (!viewer)
        logger.info('graphql-ws connection refused (4403): no token in connectionParams.authorization');
      return viewer;
    },
  };
}

/**
 * Puts the viewer in every operation's context and builds that context with it (`buildContext`,
 * src/context.ts): the viewer a transport already resolved (graphql-ws, at `connection_init`), else
 * the one of the request's `Authorization` header. A bad token fails the request with 401 before any
 * resolver runs. Register it first: other plugins read `context.viewer`.
 */
export function useViewerAuth(
  auth: ViewerAuth,
  buildContext: (viewer: Viewer | null) => GraphQLContext,
): Plugin<GraphQLContext> {
  return {
    onContextBuilding({ context, extendContext }) {
      const initial = context as Partial<GraphQLContext> & { request: Request; viewerRefusal?: unknown };
      // The token was refused already (the SSE road of src/server/graphql-http.ts): the same answer, checked once.
      if (initial.viewerRefusal) throw initial.viewerRefusal;
      if (initial.viewer !== undefined) {
        extendContext(buildContext(initial.viewer));
        return;
      }
      const header = initial.request.headers.get('authorization');
      // A client's repeated token (or none) is answered without a promise: the hook stays synchronous.
      const known = auth.knownViewer(header);
      if (known !== undefined) {
        extendContext(buildContext(known));
        return;
      }
      return auth.fromHeader(header).then((viewer) => {
        extendContext(buildContext(viewer));
      });
    },
  };
}
