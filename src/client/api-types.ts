// Generated from the admin API's OpenAPI document (src/api/openapi.ts) by `npm run web:types`: do not edit.
// The types of the admin API as the panel, the portal and the typed client (tekil/client) call it: every
// route with its path and query parameters, its body, and the JSON its success answers.

export interface ApiOperations {
  /** Create an endpoint; its secret is in this answer only */
  "POST /endpoints": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      tenant_id?: string;
      kind?: "http" | "rabbitmq" | "nats" | "redis";
      url: string;
      description?: string;
      event_types?: string[];
      ladder?: string | string[];
      timeout?: number | string;
      max_in_flight?: number;
      rate_limit?: string | null;
      scheme?: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac?: {
        algorithm?: "sha256" | "sha1" | "sha512";
        signature_header?: string;
        signature?: string;
        encoding?: "hex" | "base64";
        prefix?: string;
        separator?: string;
        signed_payload?: string;
        timestamp_header?: string;
        id_header?: string;
        secret_encoding?: "utf8" | "base64";
      };
      secret?: string;
      enabled?: boolean;
      event_id?: "message" | "delivery";
      signing?: "v1" | "v1a" | "both";
    };
    answer: {
      id: string;
      tenant_id: string;
      url: string;
      description: string | null;
      event_types: string[];
      ladder: string | string[];
      timeout_ms: number;
      max_in_flight: number;
      scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac: {
        [key: string]: unknown;
      } | null;
      enabled: boolean;
      disabled_reason: string | null;
      consecutive_failures: number;
      rate_limit: string | null;
      failed_attempts_in_row: number;
      next_probe_at: string | null;
      event_id: "message" | "delivery";
      own_settings: string[];
      slow: {
        p90_ms: number;
      } | null;
      created_at: string;
      updated_at: string;
      secret: string;
    };
  };
  /** List endpoints (of one tenant with `tenant_id`) */
  "GET /endpoints": {
    path: Record<string, never>;
    query: {
      tenant_id?: string;
    };
    body: undefined;
    answer: {
      items: ({
        id: string;
        tenant_id: string;
        url: string;
        description: string | null;
        event_types: string[];
        ladder: string | string[];
        timeout_ms: number;
        max_in_flight: number;
        scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
        hmac: {
          [key: string]: unknown;
        } | null;
        enabled: boolean;
        disabled_reason: string | null;
        consecutive_failures: number;
        rate_limit: string | null;
        failed_attempts_in_row: number;
        next_probe_at: string | null;
        event_id: "message" | "delivery";
        own_settings: string[];
        slow: {
          p90_ms: number;
        } | null;
        created_at: string;
        updated_at: string;
      })[];
    };
  };
  /** Show one endpoint */
  "GET /endpoints/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      tenant_id: string;
      url: string;
      description: string | null;
      event_types: string[];
      ladder: string | string[];
      timeout_ms: number;
      max_in_flight: number;
      scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac: {
        [key: string]: unknown;
      } | null;
      enabled: boolean;
      disabled_reason: string | null;
      consecutive_failures: number;
      rate_limit: string | null;
      failed_attempts_in_row: number;
      next_probe_at: string | null;
      event_id: "message" | "delivery";
      own_settings: string[];
      slow: {
        p90_ms: number;
      } | null;
      created_at: string;
      updated_at: string;
    };
  };
  /** Change an endpoint's settings */
  "PATCH /endpoints/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      kind?: "http" | "rabbitmq" | "nats" | "redis";
      url?: string;
      description?: string;
      event_types?: string[];
      ladder?: string | string[];
      timeout?: number | string;
      max_in_flight?: number;
      rate_limit?: string | null;
      scheme?: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac?: {
        algorithm?: "sha256" | "sha1" | "sha512";
        signature_header?: string;
        signature?: string;
        encoding?: "hex" | "base64";
        prefix?: string;
        separator?: string;
        signed_payload?: string;
        timestamp_header?: string;
        id_header?: string;
        secret_encoding?: "utf8" | "base64";
      };
      enabled?: boolean;
      event_id?: "message" | "delivery";
      signing?: "v1" | "v1a" | "both";
      inherit?: ("ladder" | "timeout" | "max_in_flight" | "rate_limit" | "event_id")[];
    } | undefined;
    answer: {
      id: string;
      tenant_id: string;
      url: string;
      description: string | null;
      event_types: string[];
      ladder: string | string[];
      timeout_ms: number;
      max_in_flight: number;
      scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac: {
        [key: string]: unknown;
      } | null;
      enabled: boolean;
      disabled_reason: string | null;
      consecutive_failures: number;
      rate_limit: string | null;
      failed_attempts_in_row: number;
      next_probe_at: string | null;
      event_id: "message" | "delivery";
      own_settings: string[];
      slow: {
        p90_ms: number;
      } | null;
      created_at: string;
      updated_at: string;
    };
  };
  /** Delete an endpoint */
  "DELETE /endpoints/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      deleted: true;
      cancelled: number;
    };
  };
  /** Stop sending to an endpoint */
  "POST /endpoints/{id}/disable": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      tenant_id: string;
      url: string;
      description: string | null;
      event_types: string[];
      ladder: string | string[];
      timeout_ms: number;
      max_in_flight: number;
      scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac: {
        [key: string]: unknown;
      } | null;
      enabled: boolean;
      disabled_reason: string | null;
      consecutive_failures: number;
      rate_limit: string | null;
      failed_attempts_in_row: number;
      next_probe_at: string | null;
      event_id: "message" | "delivery";
      own_settings: string[];
      slow: {
        p90_ms: number;
      } | null;
      created_at: string;
      updated_at: string;
    };
  };
  /** Resume sending to an endpoint */
  "POST /endpoints/{id}/enable": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      tenant_id: string;
      url: string;
      description: string | null;
      event_types: string[];
      ladder: string | string[];
      timeout_ms: number;
      max_in_flight: number;
      scheme: "standard" | "paymos" | "stripe" | "github" | "shopify" | "hmac";
      hmac: {
        [key: string]: unknown;
      } | null;
      enabled: boolean;
      disabled_reason: string | null;
      consecutive_failures: number;
      rate_limit: string | null;
      failed_attempts_in_row: number;
      next_probe_at: string | null;
      event_id: "message" | "delivery";
      own_settings: string[];
      slow: {
        p90_ms: number;
      } | null;
      created_at: string;
      updated_at: string;
    };
  };
  /** Rotate an endpoint's secret; the old one signs too for `window` */
  "POST /endpoints/{id}/rotate-secret": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      window?: number | string;
    } | undefined;
    answer: {
      id: string;
      secret: string;
      previous_expires_at: string;
    };
  };
  /** Send a test.ping to one endpoint */
  "POST /endpoints/{id}/ping": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
    };
  };
  /** Publish a message (Idempotency-Key header honoured) */
  "POST /messages": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      tenant_id?: string;
      type: string;
      resource_id?: string | null;
      data?: unknown;
      extra_destinations?: {
        url: string;
        endpoint_id: string;
      }[];
    };
    answer: {
      id: string;
    };
  };
  /** List published messages */
  "GET /messages": {
    path: Record<string, never>;
    query: {
      endpoint_id?: string;
      tenant_id?: string;
      type?: string;
      status?: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
      resource_id?: string;
      since?: string;
      until?: string;
      cursor?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      items: ({
        id: string;
        tenant_id: string;
        event_type: string;
        resource_id: string | null;
        created_at: string;
        deliveries: {
          [key: string]: number;
        };
      })[];
      next_cursor: string | null;
    };
  };
  /** Show one message with its deliveries */
  "GET /messages/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      tenant_id: string;
      event_type: string;
      resource_id: string | null;
      idempotency_key: string | null;
      created_at: string;
      payload: unknown;
      payload_trimmed_at: string | null;
      deliveries: ({
        id: number;
        message_id: string;
        endpoint_id: string;
        url: string;
        status: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
        attempts: number;
        next_attempt_at: string | null;
        last_status_code: number | null;
        last_error: string | null;
        last_attempt_at: string | null;
        created_at: string;
        completed_at: string | null;
        event_id: string;
        attempt_history: ({
          id: number;
          delivery_id: number;
          attempt: number;
          url: string;
          started_at: string;
          duration_ms: number;
          succeeded: boolean;
          status_code: number | null;
          error: string | null;
          response_body: string | null;
        })[];
      })[];
    };
  };
  /** Send a message again (to one endpoint or all) */
  "POST /messages/{id}/replay": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      endpoint_id?: string;
    } | undefined;
    answer: {
      replayed: number;
    };
  };
  /** List outbound deliveries with their last attempt */
  "GET /deliveries": {
    path: Record<string, never>;
    query: {
      endpoint_id?: string;
      tenant_id?: string;
      type?: string;
      status?: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
      resource_id?: string;
      since?: string;
      until?: string;
      cursor?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      items: ({
        id: number;
        message_id: string;
        endpoint_id: string;
        url: string;
        status: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
        attempts: number;
        next_attempt_at: string | null;
        last_status_code: number | null;
        last_error: string | null;
        last_attempt_at: string | null;
        created_at: string;
        completed_at: string | null;
        event_id: string;
        event_type: string;
        resource_id: string | null;
        last_duration_ms: number | null;
      })[];
      next_cursor: string | null;
    };
  };
  /** Replay failed deliveries, by endpoint and time window */
  "POST /deliveries/replay-failed": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      endpoint_id?: string;
      since?: string;
      until?: string;
    } | undefined;
    answer: {
      replayed: number;
    };
  };
  /** Declare an event type with its JSON Schema (2020-12) and example */
  "POST /event-types": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
      description?: string;
      schema?: ({
        [key: string]: unknown;
      } | boolean) | null;
      example?: unknown;
      deprecated?: boolean;
      tenant_ids?: string[] | null;
    };
    answer: {
      name: string;
      description: string;
      schema: ({
        [key: string]: unknown;
      } | boolean) | null;
      example: unknown;
      deprecated: boolean;
      tenant_ids: string[] | null;
      version: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** List the event catalogue (a tenant reads the types shown to it) */
  "GET /event-types": {
    path: Record<string, never>;
    query: {
      tenant_id?: string;
    };
    body: undefined;
    answer: {
      items: ({
        name: string;
        description: string;
        schema: ({
          [key: string]: unknown;
        } | boolean) | null;
        example: unknown;
        deprecated: boolean;
        tenant_ids: string[] | null;
        version: number;
        created_at: string;
        updated_at: string;
      })[];
    };
  };
  /** The event catalogue as an AsyncAPI 3.0 document */
  "GET /event-types/asyncapi.json": {
    path: Record<string, never>;
    query: {
      tenant_id?: string;
    };
    body: undefined;
    answer: {
      asyncapi: "3.0.0";
      [key: string]: unknown;
    };
  };
  /** Show one event type */
  "GET /event-types/{name}": {
    path: {
      name: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      name: string;
      description: string;
      schema: ({
        [key: string]: unknown;
      } | boolean) | null;
      example: unknown;
      deprecated: boolean;
      tenant_ids: string[] | null;
      version: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** Change an event type (a new schema moves its version on) */
  "PATCH /event-types/{name}": {
    path: {
      name: string;
    };
    query: Record<string, never>;
    body: {
      description?: string;
      schema?: ({
        [key: string]: unknown;
      } | boolean) | null;
      example?: unknown;
      deprecated?: boolean;
      tenant_ids?: string[] | null;
    } | undefined;
    answer: {
      name: string;
      description: string;
      schema: ({
        [key: string]: unknown;
      } | boolean) | null;
      example: unknown;
      deprecated: boolean;
      tenant_ids: string[] | null;
      version: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** Create a tenant (one per merchant); `id` is your own merchant id, or generated */
  "POST /tenants": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      id?: string;
      name?: string;
      metadata?: {
        [key: string]: unknown;
      };
      disabled?: boolean;
      ladder?: (string | string[]) | null;
      timeout?: (number | string) | null;
      rate_limit?: string | null;
      endpoint_max_in_flight?: number | null;
      event_id?: ("message" | "delivery") | null;
      max_in_flight?: number | null;
      weight?: number;
    } | undefined;
    answer: {
      id: string;
      name: string | null;
      metadata: {
        [key: string]: unknown;
      };
      disabled: boolean;
      ladder: unknown;
      timeout_ms: number | null;
      rate_limit: string | null;
      endpoint_max_in_flight: number | null;
      event_id: string | null;
      max_in_flight: number | null;
      weight: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** List tenants in id order (`after` pages on) */
  "GET /tenants": {
    path: Record<string, never>;
    query: {
      after?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      items: ({
        id: string;
        name: string | null;
        metadata: {
          [key: string]: unknown;
        };
        disabled: boolean;
        ladder: unknown;
        timeout_ms: number | null;
        rate_limit: string | null;
        endpoint_max_in_flight: number | null;
        event_id: string | null;
        max_in_flight: number | null;
        weight: number;
        created_at: string;
        updated_at: string;
      })[];
      next_cursor: string | null;
    };
  };
  /** Show one tenant */
  "GET /tenants/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      name: string | null;
      metadata: {
        [key: string]: unknown;
      };
      disabled: boolean;
      ladder: unknown;
      timeout_ms: number | null;
      rate_limit: string | null;
      endpoint_max_in_flight: number | null;
      event_id: string | null;
      max_in_flight: number | null;
      weight: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** Change a tenant's name, metadata, `disabled` (a disabled tenant's messages are kept, not sent) or settings (defaults for its endpoints, `max_in_flight`, `weight`; null clears one) */
  "PATCH /tenants/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      name?: string | null;
      metadata?: {
        [key: string]: unknown;
      };
      disabled?: boolean;
      ladder?: (string | string[]) | null;
      timeout?: (number | string) | null;
      rate_limit?: string | null;
      endpoint_max_in_flight?: number | null;
      event_id?: ("message" | "delivery") | null;
      max_in_flight?: number | null;
      weight?: number;
    } | undefined;
    answer: {
      id: string;
      name: string | null;
      metadata: {
        [key: string]: unknown;
      };
      disabled: boolean;
      ladder: unknown;
      timeout_ms: number | null;
      rate_limit: string | null;
      endpoint_max_in_flight: number | null;
      event_id: string | null;
      max_in_flight: number | null;
      weight: number;
      created_at: string;
      updated_at: string;
    };
  };
  /** Delete a tenant with its endpoints, messages, deliveries and attempts; needs `confirm: true` */
  "DELETE /tenants/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      confirm?: boolean;
    } | undefined;
    answer: {
      id: string;
      deleted: true;
      endpoints: number;
      messages: number;
      deliveries: number;
    };
  };
  /** Make a token of one tenant (it sees that tenant's rows only); the token is in this answer only */
  "POST /tenants/{id}/tokens": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      role: "viewer" | "operator";
      name?: string;
    };
    answer: {
      id: string;
      tenant_id: string;
      name: string | null;
      role: "viewer" | "operator";
      prefix: string;
      created_at: string;
      revoked_at: string | null;
      last_used_at: string | null;
      token: string;
    };
  };
  /** List a tenant's tokens (revoked ones with revoked=true) */
  "GET /tenants/{id}/tokens": {
    path: {
      id: string;
    };
    query: {
      revoked?: "true" | "false";
    };
    body: undefined;
    answer: {
      items: ({
        id: string;
        tenant_id: string;
        name: string | null;
        role: "viewer" | "operator";
        prefix: string;
        created_at: string;
        revoked_at: string | null;
        last_used_at: string | null;
      })[];
    };
  };
  /** Revoke a tenant's token; the sessions signed in with it end too */
  "POST /tenants/{id}/tokens/{token_id}/revoke": {
    path: {
      id: string;
      token_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      tenant_id: string;
      name: string | null;
      role: "viewer" | "operator";
      prefix: string;
      created_at: string;
      revoked_at: string | null;
      last_used_at: string | null;
    };
  };
  /** Make a one-time link into the tenant's portal (default ttl 10m, role viewer) */
  "POST /tenants/{id}/portal-links": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      ttl?: number | string;
      role?: "viewer" | "operator";
    } | undefined;
    answer: {
      url: string;
      expires_at: string;
      role: string;
      tenant_id: string;
    };
  };
  /** A tenant's quotas, its own overrides and what it holds */
  "GET /tenants/{id}/quotas": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      tenant_id: string;
      quotas: {
        endpoints: number;
        tokens: number;
        secrets: number;
        streams: number;
      };
      own: {
        [key: string]: unknown;
      };
      held: {
        endpoints: number;
        tokens: number;
      };
    };
  };
  /** Set a tenant's own quotas (null: back to the configured default) */
  "PATCH /tenants/{id}/quotas": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      endpoints?: number | null;
      tokens?: number | null;
      secrets?: number | null;
      streams?: number | null;
    } | undefined;
    answer: {
      tenant_id: string;
      quotas: {
        endpoints: number;
        tokens: number;
        secrets: number;
        streams: number;
      };
      own: {
        [key: string]: unknown;
      };
      held: {
        endpoints: number;
        tokens: number;
      };
    };
  };
  /** A tenant's live Ed25519 public keys (`v1a`), current first; never a secret key */
  "GET /tenants/{id}/signing-keys": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      tenant_id: string;
      keys: ({
        kid: string;
        public_key: string;
        created_at: string;
        expires_at: string | null;
      })[];
    };
  };
  /** Make a new Ed25519 key pair for a tenant; its live keys keep signing beside it for `window` */
  "POST /tenants/{id}/signing-keys/rotate": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: {
      window?: number | string;
    } | undefined;
    answer: {
      tenant_id: string;
      key: {
        kid: string;
        public_key: string;
        created_at: string;
        expires_at: string | null;
      };
      previous_expires_at: string | null;
    };
  };
  /** List inbound deliveries, newest first, by filter and cursor */
  "GET /inbox": {
    path: Record<string, never>;
    query: {
      status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
      source?: string;
      type?: string;
      resource_id?: string;
      event_id?: string;
      min_attempts?: number;
      since?: string;
      until?: string;
      limit?: number;
      cursor?: string;
    };
    body: undefined;
    answer: {
      items: {
        [key: string]: unknown;
      }[];
      next_cursor: string | null;
    };
  };
  /** Show one delivery with its body, headers and attempts */
  "GET /inbox/{source}/{event_id}": {
    path: {
      source: string;
      event_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Replay every delivery matching the filter (dead ones unless force) */
  "POST /inbox/replay": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
      source?: string;
      type?: string;
      resource_id?: string;
      event_id?: string;
      min_attempts?: number;
      since?: string;
      until?: string;
      force?: boolean;
    } | undefined;
    answer: {
      replayed: number;
    };
  };
  /** Replay one delivery */
  "POST /inbox/{source}/{event_id}/replay": {
    path: {
      source: string;
      event_id: string;
    };
    query: Record<string, never>;
    body: {
      force?: boolean;
    } | undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Discard one delivery from the review queue */
  "POST /inbox/{source}/{event_id}/discard": {
    path: {
      source: string;
      event_id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Every delivery of one resource in provider order: applied, stale (and the ordering guard's reason) or open */
  "GET /resources/{resource_id}/timeline": {
    path: {
      resource_id: string;
    };
    query: {
      source?: string;
    };
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Make a named operator token with a role; the token is in this answer only */
  "POST /operators": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      name: string;
      role: "viewer" | "operator";
    };
    answer: {
      id: string;
      name: string;
      role: "viewer" | "operator";
      created_at: string;
      last_used_at: string | null;
      revoked_at: string | null;
      token: string;
    };
  };
  /** List operators (revoked ones with revoked=true) */
  "GET /operators": {
    path: Record<string, never>;
    query: {
      revoked?: "true" | "false";
    };
    body: undefined;
    answer: {
      items: ({
        id: string;
        name: string;
        role: "viewer" | "operator";
        created_at: string;
        last_used_at: string | null;
        revoked_at: string | null;
      })[];
    };
  };
  /** Revoke an operator (by id or name) and end its sessions */
  "POST /operators/{id}/revoke": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      id: string;
      name: string;
      role: "viewer" | "operator";
      created_at: string;
      last_used_at: string | null;
      revoked_at: string | null;
    };
  };
  /** Sign in with a token: sets the session cookie, answers the CSRF token */
  "POST /session": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      token: string;
    };
    answer: {
      name: string;
      role: string;
      csrf_token: string;
      expires_at: string;
    };
  };
  /** Who is signed in, with the CSRF token for changes; a tenant's caller also gets its tenant and the portal's branding */
  "GET /session": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    answer: {
      name?: string;
      role?: string;
      csrf_token: string | null;
      csrf?: string | null;
      tenant?: {
        id: string;
        name: string | null;
      };
      portal?: {
        name: string | null;
        logo_url: string | null;
        accent_color: string | null;
      };
    };
  };
  /** Sign out: ends the session and clears its cookie */
  "DELETE /session": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    answer: {
      signed_out: boolean;
    };
  };
  /** Per minute: received, done, stale and dead inbound deliveries; this process's receiver: accepted, duplicate and rejected (totals and per minute) and acknowledgement latency */
  "GET /stats/inbox": {
    path: Record<string, never>;
    query: {
      window?: number | string;
      source?: string;
    };
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Per endpoint: attempts, success rate, latency p50/p99, last success and failing since, in the window; and failed deliveries */
  "GET /stats/outbox": {
    path: Record<string, never>;
    query: {
      window?: number | string;
    };
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Tenants in id order (`q` searches id and name, `after` pages on, at most 100), each with its endpoints, failing endpoints, success rate of the deliveries attempted in the window, and deliveries pending and failed */
  "GET /stats/tenants": {
    path: Record<string, never>;
    query: {
      q?: string;
      after?: string;
      limit?: number;
      window?: number | string;
    };
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Export inbound deliveries matching the filter as CSV */
  "GET /inbox/export.csv": {
    path: Record<string, never>;
    query: {
      status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
      source?: string;
      type?: string;
      resource_id?: string;
      event_id?: string;
      min_attempts?: number;
      since?: string;
      until?: string;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** Export outbound deliveries matching the filter as CSV */
  "GET /deliveries/export.csv": {
    path: Record<string, never>;
    query: {
      endpoint_id?: string;
      tenant_id?: string;
      type?: string;
      status?: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
      resource_id?: string;
      since?: string;
      until?: string;
      cursor?: string;
      limit?: number;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** Export inbound deliveries matching the filter as XLSX */
  "GET /inbox/export.xlsx": {
    path: Record<string, never>;
    query: {
      status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
      source?: string;
      type?: string;
      resource_id?: string;
      event_id?: string;
      min_attempts?: number;
      since?: string;
      until?: string;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** Export outbound deliveries matching the filter as XLSX */
  "GET /deliveries/export.xlsx": {
    path: Record<string, never>;
    query: {
      endpoint_id?: string;
      tenant_id?: string;
      type?: string;
      status?: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
      resource_id?: string;
      since?: string;
      until?: string;
      cursor?: string;
      limit?: number;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** Export inbound deliveries matching the filter as PDF */
  "GET /inbox/export.pdf": {
    path: Record<string, never>;
    query: {
      status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
      source?: string;
      type?: string;
      resource_id?: string;
      event_id?: string;
      min_attempts?: number;
      since?: string;
      until?: string;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** Export outbound deliveries matching the filter as PDF */
  "GET /deliveries/export.pdf": {
    path: Record<string, never>;
    query: {
      endpoint_id?: string;
      tenant_id?: string;
      type?: string;
      status?: "pending" | "sending" | "succeeded" | "failed" | "cancelled";
      resource_id?: string;
      since?: string;
      until?: string;
      cursor?: string;
      limit?: number;
      lang?: "en" | "tr";
      tz?: string;
    };
    body: undefined;
    answer: never;
  };
  /** How many inbound deliveries a filter matches now (what a job would touch) */
  "POST /jobs/dry-run": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      filter?: {
        status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
        source?: string;
        type?: string;
        resource_id?: string;
        event_id?: string;
        min_attempts?: number;
        since?: string;
        until?: string;
      };
    } | undefined;
    answer: {
      matching: number;
    };
  };
  /** Start a bulk replay or discard of the inbound deliveries matching a filter */
  "POST /jobs": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      kind: "inbox.replay" | "inbox.discard";
      filter?: {
        status?: "pending" | "processing" | "done" | "stale" | "dead" | "discarded";
        source?: string;
        type?: string;
        resource_id?: string;
        event_id?: string;
        min_attempts?: number;
        since?: string;
        until?: string;
      };
      force?: boolean;
    };
    answer: {
      [key: string]: unknown;
    };
  };
  /** The latest 50 jobs, newest first */
  "GET /jobs": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    answer: {
      items: {
        [key: string]: unknown;
      }[];
    };
  };
  /** A job's status and progress */
  "GET /jobs/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Cancel a job at its next batch; what it did stays done */
  "POST /jobs/{id}/cancel": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** Server-sent events of inbound deliveries arriving and changing state (a tenant's caller: its outbound deliveries) */
  "GET /events": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    answer: never;
  };
  /** List reconcile runs, newest first */
  "GET /reconcile/runs": {
    path: Record<string, never>;
    query: {
      source?: string;
      before?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      runs: {
        [key: string]: unknown;
      }[];
      next_before: string | number | null;
    };
  };
  /** Run reconcile for a source now (with apply: record what is missing) */
  "POST /reconcile/runs": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      source: string;
      since: string;
      until?: string;
      apply?: boolean;
    };
    answer: {
      [key: string]: unknown;
    };
  };
  /** Show one run's report: counts per kind and its findings */
  "GET /reconcile/runs/{id}": {
    path: {
      id: string;
    };
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
  /** List findings by kind, source and run */
  "GET /reconcile/findings": {
    path: Record<string, never>;
    query: {
      source?: string;
      kind?: "missing" | "unprocessed" | "state" | "extra";
      run?: string;
      before?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      findings: {
        [key: string]: unknown;
      }[];
      next_before: string | number | null;
    };
  };
  /** List incidents (open and closed), newest first */
  "GET /incidents": {
    path: Record<string, never>;
    query: {
      state?: "open" | "closed";
      before?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      incidents: ({
        id: string;
        rule: string;
        subject: string;
        state: "open" | "closed";
        opened_at: string;
        closed_at: string | null;
        summary: string;
        last_value: number | null;
        details: {
          [key: string]: unknown;
        };
      })[];
      next_before: string | null;
    };
  };
  /** The audit trail, newest first: every change asked of this API, and refused sign-ins */
  "GET /audit": {
    path: Record<string, never>;
    query: {
      actor?: string;
      route?: string;
      method?: "POST" | "PUT" | "PATCH" | "DELETE" | "GET";
      since?: string;
      until?: string;
      outcome?: "ok" | "refused";
      cursor?: string;
      limit?: number;
    };
    body: undefined;
    answer: {
      items: {
        [key: string]: unknown;
      }[];
      next_cursor: string | null;
    };
  };
  /** Export the audit rows matching the filter as CSV */
  "GET /audit/export.csv": {
    path: Record<string, never>;
    query: {
      actor?: string;
      route?: string;
      method?: "POST" | "PUT" | "PATCH" | "DELETE" | "GET";
      since?: string;
      until?: string;
      outcome?: "ok" | "refused";
    };
    body: undefined;
    answer: never;
  };
  /** Export the audit rows matching the filter as XLSX */
  "GET /audit/export.xlsx": {
    path: Record<string, never>;
    query: {
      actor?: string;
      route?: string;
      method?: "POST" | "PUT" | "PATCH" | "DELETE" | "GET";
      since?: string;
      until?: string;
      outcome?: "ok" | "refused";
    };
    body: undefined;
    answer: never;
  };
  /** Erase a person's data: the bodies of chosen deliveries, or of every delivery of a resource id, keeping their ids */
  "POST /erasures": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: {
      resource_id?: string;
      source?: string;
      inbound?: {
        source: string;
        event_id: string;
      }[];
      messages?: string[];
      deliveries?: (string | number)[];
      confirm?: boolean;
    } | undefined;
    answer: {
      at: string;
      inbound: {
        erased: number;
        already: number;
        in_flight: number;
      };
      outbound: {
        erased: number;
        already: number;
        in_flight: number;
      };
    };
  };
  /** This API as an OpenAPI 3.1 document */
  "GET /openapi.json": {
    path: Record<string, never>;
    query: Record<string, never>;
    body: undefined;
    answer: {
      [key: string]: unknown;
    };
  };
}

/** A route, as `METHOD /path` with its parameters in braces: `POST /endpoints/{id}/ping`. */
export type ApiRoute = keyof ApiOperations;
export type ApiMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** A path the panel may ask for (below /api/v1), with its parameters filled in and maybe a query. */
export type ApiPath =
  | "/endpoints"
  | `/endpoints?${string}`
  | `/endpoints/${string}`
  | `/endpoints/${string}/disable`
  | `/endpoints/${string}/enable`
  | `/endpoints/${string}/rotate-secret`
  | `/endpoints/${string}/ping`
  | "/messages"
  | `/messages?${string}`
  | `/messages/${string}`
  | `/messages/${string}/replay`
  | "/deliveries"
  | `/deliveries?${string}`
  | "/deliveries/replay-failed"
  | "/event-types"
  | `/event-types?${string}`
  | "/event-types/asyncapi.json"
  | `/event-types/asyncapi.json?${string}`
  | `/event-types/${string}`
  | "/tenants"
  | `/tenants?${string}`
  | `/tenants/${string}`
  | `/tenants/${string}/tokens`
  | `/tenants/${string}/tokens?${string}`
  | `/tenants/${string}/tokens/${string}/revoke`
  | `/tenants/${string}/portal-links`
  | `/tenants/${string}/quotas`
  | `/tenants/${string}/signing-keys`
  | `/tenants/${string}/signing-keys/rotate`
  | "/inbox"
  | `/inbox?${string}`
  | `/inbox/${string}/${string}`
  | "/inbox/replay"
  | `/inbox/${string}/${string}/replay`
  | `/inbox/${string}/${string}/discard`
  | `/resources/${string}/timeline`
  | `/resources/${string}/timeline?${string}`
  | "/operators"
  | `/operators?${string}`
  | `/operators/${string}/revoke`
  | "/session"
  | "/stats/inbox"
  | `/stats/inbox?${string}`
  | "/stats/outbox"
  | `/stats/outbox?${string}`
  | "/stats/tenants"
  | `/stats/tenants?${string}`
  | "/inbox/export.csv"
  | `/inbox/export.csv?${string}`
  | "/deliveries/export.csv"
  | `/deliveries/export.csv?${string}`
  | "/inbox/export.xlsx"
  | `/inbox/export.xlsx?${string}`
  | "/deliveries/export.xlsx"
  | `/deliveries/export.xlsx?${string}`
  | "/inbox/export.pdf"
  | `/inbox/export.pdf?${string}`
  | "/deliveries/export.pdf"
  | `/deliveries/export.pdf?${string}`
  | "/jobs/dry-run"
  | "/jobs"
  | `/jobs/${string}`
  | `/jobs/${string}/cancel`
  | "/events"
  | "/reconcile/runs"
  | `/reconcile/runs?${string}`
  | `/reconcile/runs/${string}`
  | "/reconcile/findings"
  | `/reconcile/findings?${string}`
  | "/incidents"
  | `/incidents?${string}`
  | "/audit"
  | `/audit?${string}`
  | "/audit/export.csv"
  | `/audit/export.csv?${string}`
  | "/audit/export.xlsx"
  | `/audit/export.xlsx?${string}`
  | "/erasures"
  | "/openapi.json";
export type ApiBody<R extends ApiRoute> = ApiOperations[R]['body'];
export type ApiQuery<R extends ApiRoute> = ApiOperations[R]['query'];
export type ApiParams<R extends ApiRoute> = ApiOperations[R]['path'];
/** What a success of the route answers (JSON). */
export type ApiAnswer<R extends ApiRoute> = ApiOperations[R]['answer'];
