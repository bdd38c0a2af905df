import { z } from 'zod';

/** An origin a browser sends: scheme, host and port, nothing after (`https://panel.example.com`). */
const origin = z
  .string()
  .regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/, 'an origin is scheme://host[:port], e.g. https://panel.example.com (no path, no wildcard)');

/**
 * The merchant portal (`/portal/`, docs/tenants.md): its branding, the address its links are made
 * with, and the origins allowed to embed it in an iframe.
 */
export const portalSchema = z
  .object({
    /** Where links point (`<public_url>/portal/link/…`); default: the origin of the request that made the link. */
    public_url: z
      .string()
      .url()
      .regex(/^https?:\/\//, 'an http(s) URL')
      .optional(),
    /** Shown in the portal's header instead of "tekil". */
    name: z.string().min(1).max(100).optional(),
    logo_url: z
      .string()
      .url()
      .regex(/^https:\/\//, 'an https URL')
      .optional(),
    /** A CSS hex colour, e.g. #0a7cff. */
    accent_color: z
      .string()
      .regex(/^#[0-9a-fA-F]{6}$/, 'a hex colour, e.g. #0a7cff')
      .optional(),
    /**
     * Origins whose pages may show the portal in an iframe (CSP frame-ancestors). When set, the portal's
     * session cookie is `SameSite=None; Secure`, so it is sent inside the frame (which needs https).
     */
    frame_ancestors: z.array(origin).max(20).default([]),
  })
  .strict();
export type PortalConfig = z.infer<typeof portalSchema>;
