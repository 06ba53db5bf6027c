/**
 * Bytes held at once up to a bound (src/lib/byte-reservations.ts): request bodies and WebSocket
 * messages being received, upstream answers being read. A holder that would pass the bound is
 * refused at once; holders up to the small size count nothing.
 */
import { describe, expect, it } from 'vitest';
import { ByteReservations } from '../../src/lib/byte-reservations.js';

describe('a holding of a known length', () => {
  it('holds its bytes until released, and is refused, holding nothing, when it would pass the bound', () => {
    const reservations = new ByteReservations(100);
    const first = reservations.holding();
    expect(first.add(60)).toBe(true);
    expect(reservations.bytes).toBe(60);
    expect(reservations.holding().add(41)).toBe(false);
    expect(reservations.bytes).toBe(60);
    expect(reservations.holding().add(40)).toBe(true);
    expect(reservations.bytes).toBe(100);
    first.release();
    expect(reservations.bytes).toBe(40);
    expect(reservations.holding().add(60)).toBe(true);
    expect(reservations.bytes).toBe(100);
  });

  it('counts nothing up to the small size, even when the bound is reached; one byte more counts all', () => {
    const reservations = new ByteReservations(100, 10);
    expect(reservations.holding().add(100)).toBe(true);
    const small = reservations.holding();
    expect(small.add(10)).toBe(true);
    expect(reservations.bytes).toBe(100);
    small.release();
    expect(reservations.bytes).toBe(100);
    expect(reservations.holding().add(11)).toBe(false);
  });

  it('resized to nothing between messages, gives its bytes back and may hold again', () => {
    const reservations = new ByteReservations(100);
    const message = reservations.holding();
    expect(message.resize(30)).toBe(true);
    reservations.holding().add(20);
    expect(message.resize(0)).toBe(true);
    expect(message.resize(0)).toBe(true);
    expect(reservations.bytes).toBe(20);
    expect(message.resize(81)).toBe(false);
    expect(message.resize(80)).toBe(true);
    expect(reservations.bytes).toBe(100);
  });
});

describe('a holding that grows as bytes arrive', () => {
  it('counts nothing while it holds up to the small size, then every byte it holds', () => {
    const reservations = new ByteReservations(1000, 10);
    const holding = reservations.holding();
    expect(holding.add(4)).toBe(true);
    expect(holding.add(6)).toBe(true);
    expect(reservations.bytes).toBe(0);
    expect(holding.add(1)).toBe(true);
    expect(reservations.bytes).toBe(11);
    expect(holding.add(5)).toBe(true);
    expect(reservations.bytes).toBe(16);
    holding.release();
    expect(reservations.bytes).toBe(0);
  });

  it('is refused, adding nothing, when it would pass the bound, and may add what still fits', () => {
    const reservations = new ByteReservations(100, 10);
    const other = reservations.holding();
    expect(other.add(50)).toBe(true);
    const holding = reservations.holding();
    expect(holding.add(8)).toBe(true);
    // 8 + 43 = 51 would all count: 101.
    expect(holding.add(43)).toBe(false);
    expect(reservations.bytes).toBe(50);
    // 8 + 42 = 50, exactly the bound with the other's 50.
    expect(holding.add(42)).toBe(true);
    expect(reservations.bytes).toBe(100);
    expect(holding.add(1)).toBe(false);
    expect(reservations.bytes).toBe(100);
    holding.release();
    expect(reservations.bytes).toBe(50);
    other.release();
    expect(reservations.bytes).toBe(0);
  });

  it('adds nothing once released, and gives its bytes back once', () => {
    const reservations = new ByteReservations(100);
    const other = reservations.holding();
    other.add(20);
    const holding = reservations.holding();
    holding.add(30);
    holding.release();
    expect(holding.add(1)).toBe(false);
    holding.release();
    expect(reservations.bytes).toBe(20);
  });

  it('without a small size counts from the first byte', () => {
    const reservations = new ByteReservations(10);
    const holding = reservations.holding();
    expect(holding.add(1)).toBe(true);
    expect(reservations.bytes).toBe(1);
    expect(holding.add(10)).toBe(false);
    expect(holding.add(9)).toBe(true);
    expect(reservations.bytes).toBe(10);
  });
});

describe('a holding resized, and bytes queued for a client', () => {
  it('gives back what it no longer holds, and grows only within the bound', () => {
    const reservations = new ByteReservations(100, 10);
    const holding = reservations.holding();
    expect(holding.add(60)).toBe(true);
    expect(holding.resize(20)).toBe(true);
    expect(reservations.bytes).toBe(20);
    expect(holding.resize(101)).toBe(false);
    expect(reservations.bytes).toBe(20);
    expect(holding.resize(5)).toBe(true);
    expect(reservations.bytes).toBe(0);
    // It still holds its 5 bytes: 6 more pass the small size.
    holding.add(6);
    expect(reservations.bytes).toBe(11);
  });

  it('counts queued bytes even past the bound, refusing new holders until they drain', () => {
    const reservations = new ByteReservations(100, 10);
    const holding = reservations.holding();
    holding.add(20);
    holding.queued(150);
    expect(reservations.bytes).toBe(170);
    expect(reservations.holding().add(11)).toBe(false);
    expect(reservations.holding().add(10)).toBe(true);
    holding.queued(0);
    expect(reservations.bytes).toBe(20);
    holding.queued(30);
    holding.release();
    expect(reservations.bytes).toBe(0);
    holding.queued(30);
    expect(reservations.bytes).toBe(0);
  });
});
