CREATE TABLE `pending_imports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`owner` text NOT NULL,
	`ranges` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL
);
