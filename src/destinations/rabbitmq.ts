import { connect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import type { BrokerDestination } from './broker-url.js';
import type { BrokerAnswer, BrokerMessage, BrokerPublisher } from './publisher.js';

/** The header that pairs a returned message with its publish (a return comes before its confirm). */
const PUBLISH_TAG = 'tekil-publish';

/**
 * A RabbitMQ destination: one connection and one confirm channel. A delivery succeeds when the broker
 * confirms the message (publisher confirms), published `mandatory` and persistent: a message no queue
 * takes is returned, and counts as a failure, instead of being confirmed and dropped.
 */
export class RabbitPublisher implements BrokerPublisher {
  private seq = 0;
  /** Publishes the broker returned (no queue bound for them), by tag, with its reason. */
  private readonly returned = new Map<string, string>();
  /** Why the channel closed, for the publishes it leaves unconfirmed. */
  private closeReason = 'the connection closed';
  closed = false;

  private constructor(
    private readonly model: ChannelModel,
    private readonly channel: ConfirmChannel,
    private readonly destination: BrokerDestination,
  ) {
    const lost = (err?: Error) => {
      if (err) this.closeReason = err.message;
      this.closed = true;
    };
    model.on('error', lost);
    model.on('close', lost);
    channel.on('error', lost);
    channel.on('close', () => lost());
    channel.on('return', (msg) => {
      const tag = msg.properties.headers?.[PUBLISH_TAG];
      // basic.return's fields carry the reason; amqplib's types leave them out.
      const fields = msg.fields as typeof msg.fields & { replyCode?: number; replyText?: string };
      if (typeof tag === 'string') this.returned.set(tag, `${fields.replyCode ?? '?'} ${fields.replyText ?? ''}`.trim());
    });
  }

  static async open(destination: BrokerDestination, address: string, timeoutMs: number): Promise<RabbitPublisher> {
    const model = await connect(
      {
        protocol: 'amqp',
        hostname: address,
        port: destination.port,
        username: destination.username || 'guest',
        password: destination.password || 'guest',
        vhost: destination.vhost,
        heartbeat: 30,
      },
      { timeout: timeoutMs },
    );
    try {
      const channel = await model.createConfirmChannel();
      return new RabbitPublisher(model, channel, destination);
    } catch (err) {
      await model.close().catch(() => {});
      throw err;
    }
  }

  publish(message: BrokerMessage): Promise<BrokerAnswer> {
    const tag = String(++this.seq);
    const routingKey = this.destination.routingKey ?? message.type;
    return new Promise<BrokerAnswer>((resolve, reject) => {
      try {
        this.channel.publish(
          this.destination.exchange,
          routingKey,
          message.body,
          {
            messageId: message.id,
            type: message.type,
            contentType: message.contentType,
            persistent: true,
            mandatory: true,
            timestamp: Math.floor(Date.now() / 1000),
            headers: { ...message.headers, [PUBLISH_TAG]: tag },
          },
          (err) => {
            const returned = this.returned.get(tag);
            this.returned.delete(tag);
            if (err) return reject(new Error(this.closed ? this.closeReason : 'the broker refused the message (nack)', { cause: err }));
            if (returned !== undefined)
              return resolve({ ok: false, error: `returned by the broker: ${returned} (no queue bound for routing key "${routingKey}")` });
            resolve({ ok: true, detail: `confirmed by the broker (exchange "${this.destination.exchange}", routing key "${routingKey}")` });
          },
        );
      } catch (err) {
        reject(err);
      }
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.model.close().catch(() => {});
  }
}
