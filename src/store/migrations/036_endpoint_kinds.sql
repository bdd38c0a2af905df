-- Endpoints of other kinds than HTTP (docs/destinations.md): a message published to the merchant's own
-- RabbitMQ, NATS JetStream or Redis. `url` stays what is shown and recorded in attempts, with any
-- password replaced by ***; the whole URL, credentials included, is kept encrypted in
-- `destination_enc` under the key endpoint secrets use, and only the dispatcher opens it.
ALTER TABLE endpoints ADD COLUMN kind text NOT NULL DEFAULT 'http' CHECK (kind IN ('http', 'rabbitmq', 'nats', 'redis'));
ALTER TABLE endpoints ADD COLUMN destination_enc text;
